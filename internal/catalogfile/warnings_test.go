package catalogfile_test

import (
	"os"
	"slices"
	"testing"

	"github.com/linkslot/linkslot/internal/catalogfile"
)

// TestWarnings: a valid file whose staff member has no hours, or whose
// service nobody performs, parses (it imports) and is warned of, by path;
// the testdata catalog and restaurants are not.
func TestWarnings(t *testing.T) {
	good, err := os.ReadFile("testdata/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cats, err := catalogfile.Parse(good, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := catalogfile.Warnings(cats); len(w) != 0 {
		t.Errorf("testdata/catalog.yaml warns: %v", w)
	}

	const file = `businesses:
  - reference: north-salon
    name: North Salon
    category: appointment
    timezone: Europe/Oslo
    currency: NOK
    hours: {monday: ["09:00-17:00"]}
    services:
      - {reference: cut, name: Haircut, duration_minutes: 30, price_cents: 40000}
      - {reference: beard, name: Beard trim, duration_minutes: 15, price_cents: 20000}
      - {reference: colour, name: Colour, duration_minutes: 60, price_cents: 90000}
    staff:
      - {reference: siri, name: Siri, services: [cut], hours: {monday: ["09:00-17:00"]}}
      - {reference: ola, name: Ola, services: [beard]}
  - reference: fjord-table
    name: Fjord Table
    category: restaurant
    timezone: Europe/Oslo
    currency: NOK
    services:
      - {reference: dinner, name: Dinner, duration_minutes: 90, price_cents: 0}
`
	cats, err = catalogfile.Parse([]byte(file), "yaml")
	if err != nil {
		t.Fatalf("a file with only warnings does not parse: %v", err)
	}
	var got []string
	for _, w := range catalogfile.Warnings(cats) {
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
