package catalogfile

import (
	"errors"
	"reflect"
	"testing"

	"github.com/linkslot/linkslot/internal/problem"
)

// FuzzParse checks that Parse never panics, that a refusal is always a
// *problem.Error with at least one problem, and that whatever Parse
// accepts survives Export → Parse unchanged in both formats. The seed
// corpus lives in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"businesses":[{"reference":"b","name":"B","category":"restaurant","timezone":"UTC","currency":"EUR"}]}`), true)
	f.Add([]byte("businesses:\n  - reference: b\n    name: B\n    category: appointment\n    timezone: Asia/Tokyo\n    currency: JPY\n"+
		"    services: [{reference: s, name: S, duration_minutes: 20}]\n"+
		"    staff: [{reference: x, name: X, services: [s], hours: {monday: ['09:00-12:00','13:00-17:00']}, time_off: [{from_date: 2026-01-01, to_date: 2026-01-02}]}]\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		format := FormatYAML
		if isJSON {
			format = FormatJSON
		}
		cats, err := Parse(data, format)
		if err != nil {
			var ve *problem.Error
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("refusal is not a *problem.Error with problems: %v", err)
			}
			return
		}
		for _, out := range []string{FormatJSON, FormatYAML} {
			b, err := Export(cats, out)
			if err != nil {
				t.Fatalf("Export(%s): %v", out, err)
			}
			back, err := Parse(b, out)
			if err != nil {
				t.Fatalf("Parse(Export(%s)): %v\n%s", out, err, b)
			}
			if !reflect.DeepEqual(back, cats) {
				t.Fatalf("round trip through %s differs:\n%s", out, b)
			}
		}
	})
}
