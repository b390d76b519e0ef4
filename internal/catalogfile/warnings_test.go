package catalogfile

import (
	"slices"
	"testing"
)

// TestWarnings: a valid file whose staff member has no hours, or whose
// service nobody performs, parses (it imports) and is warned of, by path;
// the testdata catalog and restaurants are not.
func TestWarnings(t *testing.T) {
	cats, err := Parse(readFile(t, "catalog.yaml"), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := Warnings(cats); len(w) != 0 {
		t.Errorf("testdata/catalog.yaml warns: %v", w)
	}

	cats, err = Parse(readFile(t, "warnings.yaml"), "yaml")
	if err != nil {
		t.Fatalf("a file with only warnings does not parse: %v", err)
	}
	var got []string
	for _, w := range Warnings(cats) {
		got = append(got, w.String())
	}
	want := []string{
		`businesses[0].staff[1]: staff member "ola" (Ola) has no hours, so no slot is ever offered with them: give them hours, or leave them out`,
		`businesses[0].services[2]: no staff member performs service "colour" (Colour), so it is never offered: add it to a staff member's services, or leave it out`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Warnings =\n%q\nwant\n%q", got, want)
	}
}
