package tools

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	fastjson "github.com/segmentio/encoding/json"
)

// TestAnswersEncodeAsEncodingJSON: every tool's answer type, filled with
// random values — strings with HTML, quotes, control and non-ASCII
// characters, instants in several zones, empty and nil slices, nil and set
// pointers, maps — encodes to the same bytes with segmentio/encoding/json
// (marshalled) as with encoding/json, which the SDK would have used.
func TestAnswersEncodeAsEncodingJSON(t *testing.T) {
	types := []any{SearchBusinessOutput{}, AvailabilityOutput{}, MyBookingsOutput{}, MyBookingOutput{},
		MyBookingAvailabilityOutput{}, MutationOutput{}, errorOut{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range types {
		typ := reflect.TypeOf(v)
		for i := 0; i < 200; i++ {
			x := reflect.New(typ).Elem()
			fill(rng, x, 0)
			want, err := json.Marshal(x.Interface())
			if err != nil {
				t.Fatal(err)
			}
			got, err := fastjson.Marshal(x.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 && testing.Verbose() {
				t.Logf("%s: %.300s", typ, got)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s encodes differently:\n  segmentio     %s\n  encoding/json %s", typ, got, want)
			}
		}
	}
}

var fillStrings = []string{"", "plain", `<b>"quoted" & 'apostrophe'</b>`, "tab\tnewline\n\x01\x1f", "é ü 漢字 😀", "\u2028\u2029", `back\slash`, "bad \xff\xfe utf-8"}

var fillZones = func() []*time.Location {
	out := []*time.Location{time.UTC, time.FixedZone("", -5*3600), time.FixedZone("", 5*3600+1800)}
	if l, err := time.LoadLocation("America/New_York"); err == nil {
		out = append(out, l)
	}
	return out
}()

// fill sets v to random values, recursively (depth bounds pointers).
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeOf(time.Time{}) {
		if rng.IntN(5) > 0 {
			t := time.Unix(rng.Int64N(4e9), rng.Int64N(3)*int64(500*time.Millisecond)).In(fillZones[rng.IntN(len(fillZones))])
			v.Set(reflect.ValueOf(t))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fillStrings[rng.IntN(len(fillStrings))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int64N(20000) - 10000)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(rng.Uint64N(20000))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(rng.Int64N(2000000))/100 - 10000)
	case reflect.Pointer:
		if depth < 4 && rng.IntN(3) > 0 {
			p := reflect.New(v.Type().Elem())
			fill(rng, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		switch rng.IntN(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + rng.IntN(3)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fill(rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		if rng.IntN(3) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range 1 + rng.IntN(3) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(rng, k, depth+1)
			fill(rng, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(rng, v.Field(i), depth)
			}
		}
	case reflect.Interface:
		if rng.IntN(2) == 0 {
			v.Set(reflect.ValueOf(fillStrings[rng.IntN(len(fillStrings))]))
		}
	}
}
