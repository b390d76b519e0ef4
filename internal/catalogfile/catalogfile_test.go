package catalogfile

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseGood(t *testing.T) {
	cats, err := Parse(readFile(t, "catalog.yaml"), "yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(cats) != 2 {
		t.Fatalf("got %d businesses", len(cats))
	}
	c := cats[0]
	if c.Business.Reference != "lisbon-cuts" || c.Business.SlotIntervalMinutes != 15 || c.Business.HorizonDays != 30 ||
		!c.Business.AgentBooking || c.Business.CancellationFeeCents != 1000 || c.Business.ContactEmail != "desk@lisbon-cuts.example" {
		t.Errorf("business = %+v", c.Business)
	}
	if c.Business.ConfirmationWindowMinutes != 720 || c.Services[0].RequiresConfirmation || !c.Services[2].RequiresConfirmation {
		t.Errorf("confirmation: window %d, services %+v", c.Business.ConfirmationWindowMinutes, c.Services)
	}
	wantCreds := []store.Credential{{Kind: "license", Name: "Barbering license", Issuer: "Lisbon City Council", Number: "LX-42", ValidUntil: "2027-06-30"},
		{Kind: "insurance", Name: "Public liability insurance"}}
	if !reflect.DeepEqual(c.Credentials, wantCreds) || cats[1].Credentials == nil || len(cats[1].Credentials) != 0 {
		t.Errorf("credentials = %+v / %+v", c.Credentials, cats[1].Credentials)
	}
	if got := c.Services[0].Currency; got != "EUR" {
		t.Errorf("service currency defaults to the business's: got %q", got)
	}
	if !slices.Equal(c.Staff[0].ServiceIDs, []string{"cut", "colour"}) {
		t.Errorf("staff services = %v", c.Staff[0].ServiceIDs)
	}
	wantMon := []store.HoursWindow{{Weekday: time.Monday, StartMin: 540, EndMin: 720}, {Weekday: time.Monday, StartMin: 780, EndMin: 1020}}
	if got := c.StaffHours["ana"][:2]; !reflect.DeepEqual(got, wantMon) {
		t.Errorf("ana monday = %+v", got)
	}
	lis, _ := time.LoadLocation("Europe/Lisbon")
	off := c.StaffTimeOff["ana"]
	if len(off) != 2 || !off[0].StartsAt.Equal(time.Date(2026, 12, 24, 0, 0, 0, 0, lis)) ||
		!off[0].EndsAt.Equal(time.Date(2026, 12, 27, 0, 0, 0, 0, lis)) || off[0].Reason != "Christmas" {
		t.Errorf("time off = %+v", off)
	}
	if off[0].StartsAt.Location() != time.UTC {
		t.Errorf("instants must be UTC")
	}
	// Restaurant with defaults and a day ending at midnight.
	r := cats[1]
	if r.Business.SlotIntervalMinutes != DefaultSlotIntervalMinutes || r.Business.HorizonDays != DefaultHorizonDays ||
		!reflect.DeepEqual(r.OpeningHours, []store.HoursWindow{{Weekday: time.Friday, StartMin: 1020, EndMin: 1440}}) {
		t.Errorf("restaurant = %+v %+v", r.Business, r.OpeningHours)
	}
}

func problems(t *testing.T, err error) []string {
	t.Helper()
	var ve *problem.Error
	if !errors.As(err, &ve) {
		t.Fatalf("want *problem.Error, got %v", err)
	}
	out := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		out[i] = p.String()
	}
	return out
}

func TestParseHalfValidListsEveryProblem(t *testing.T) {
	_, err := Parse(readFile(t, "half-valid.yaml"), "yaml")
	got := problems(t, err)
	want := []string{
		`businesses[1].reference: "good-one" is already used by businesses[0]`,
		`businesses[1].name: must not be empty`,
		`businesses[1].category: "spa" is not appointment or restaurant`,
		`businesses[1].timezone: "Mars/Olympus" is not an IANA time zone`,
		`businesses[1].currency: "euro" is not a 3-letter`,
		`businesses[1].policies.horizon_days: must be greater than 0, not -1`,
		`businesses[1].policies.slot_interval_minutes: must be greater than 0, not 0`,
		`businesses[1].services[0].duration_minutes: must be greater than 0, not 0`,
		`businesses[1].services[1].currency: "eu" is not a 3-letter`,
		`businesses[1].services[1].reference: "s1" is already used by businesses[1].services[0]`,
		`businesses[1].staff[0].services[1]: service "nope" is not among this business's services`,
		`businesses[1].staff[0].hours.monday[1]: "25:00-26:00" is not HH:MM-HH:MM`,
		`businesses[1].staff[0].hours.monday[2]: 11:00-13:00 overlaps 09:00-12:00`,
		`businesses[1].staff[0].hours.funday: unknown field`,
		`businesses[1].staff[0].time_off[0].starts_at: "tomorrow" is not an RFC 3339 instant`,
		`businesses[1].colour: unknown field`,
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			if strings.HasPrefix(g, w) {
				found = true
			}
		}
		if !found {
			t.Errorf("missing problem %q", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

func TestParseRefusals(t *testing.T) {
	base := `{"reference":"b","name":"B","category":"appointment","timezone":"UTC","currency":"EUR"`
	tests := []struct {
		name, format, data, want string
	}{
		{"empty", "yaml", "", `the file is empty`},
		{"not an object", "json", `[1]`, `must be an object, not a list`},
		{"no businesses", "json", `{"businesses":[]}`, `businesses: must list at least one business`},
		{"bad json", "json", `{"businesses":`, `not valid JSON`},
		{"trailing json", "json", `{"businesses":[]} {}`, `data after the top-level value`},
		{"bad yaml", "yaml", "businesses: [\n", `not valid YAML`},
		{"missing fields", "json", `{"businesses":[{}]}`, `businesses[0].reference: is required`},
		{"local zone", "json", `{"businesses":[` + strings.Replace(base, `"UTC"`, `"Local"`, 1) + `}]}`, `is not an IANA time zone`},
		{"string number", "json", `{"businesses":[` + base + `,"services":[{"reference":"s","name":"S","duration_minutes":"30"}]}]}`, `must be a whole number, not the text "30"`},
		{"fraction", "json", `{"businesses":[` + base + `,"services":[{"reference":"s","name":"S","duration_minutes":30.5}]}]}`, `must be a whole number`},
		{"deposit without url", "json", `{"businesses":[` + base + `,"services":[{"reference":"s","name":"S","duration_minutes":30,"deposit_required":true}]}]}`, `businesses[0].booking_url: is required because`},
		{"bad reference", "json", `{"businesses":[` + strings.Replace(base, `"b"`, `"a b"`, 1) + `}]}`, `is not a valid business reference`},
		{"both time off forms", "json", `{"businesses":[` + base + `,"staff":[{"reference":"x","name":"X","services":[],"time_off":[{"starts_at":"2026-01-01T00:00:00Z","ends_at":"2026-01-02T00:00:00Z","from_date":"2026-01-01","to_date":"2026-01-01"}]}]}]}`, `give either`},
		{"reversed dates", "json", `{"businesses":[` + base + `,"staff":[{"reference":"x","name":"X","services":[],"time_off":[{"from_date":"2026-01-02","to_date":"2026-01-01"}]}]}]}`, `to_date: must not be before from_date`},
		{"end before start", "json", `{"businesses":[` + base + `,"hours":{"monday":["10:00-09:00"]}}]}`, `"10:00-09:00" ends before it starts`},
		{"duplicate yaml key", "yaml", "businesses: []\nbusinesses: []\n", `appears twice`},
		{"bad contact email", "json", `{"businesses":[` + base + `,"contact_email":"desk at example"}]}`, `businesses[0].contact_email: "desk at example" is not an e-mail address`},
		{"named contact email", "json", `{"businesses":[` + base + `,"contact_email":"Desk <desk@example.com>"}]}`, `is not an e-mail address`},
		{"nul in name", "json", `{"businesses":[` + strings.Replace(base, `"B"`, `"B\u0000"`, 1) + `}]}`, `businesses[0].name: contains a NUL character (U+0000)`},
		{"long name", "json", `{"businesses":[` + strings.Replace(base, `"B"`, `"`+strings.Repeat("B", 100000)+`"`, 1) + `}]}`, `businesses[0].name: is 100000 characters long; at most 200 are accepted`},
		{"override in staff name", "json", `{"businesses":[` + base + `,"staff":[{"reference":"x","name":"X\u202eY","services":[]}]}]}`, `businesses[0].staff[0].name: contains the bidirectional control character U+202E`},
		{"CR in address", "json", `{"businesses":[` + base + `,"address":"1 Main St\rATTENDEE:x"}]}`, `businesses[0].address: contains the control character U+000D`},
		{"long policy", "json", `{"businesses":[` + base + `,"policies":{"cancellation_policy":"` + strings.Repeat("p", 2001) + `"}}]}`, `cancellation_policy: is 2001 characters long; at most 2000`},
		{"credential kind", "json", `{"businesses":[` + base + `,"credentials":[{"kind":"diploma","name":"X"}]}]}`, `businesses[0].credentials[0].kind: "diploma" is not license, insurance or certification`},
		{"credential name", "json", `{"businesses":[` + base + `,"credentials":[{"kind":"license"}]}]}`, `businesses[0].credentials[0].name: is required`},
		{"credential date", "json", `{"businesses":[` + base + `,"credentials":[{"kind":"license","name":"L","valid_until":"30/06/2027"}]}]}`, `businesses[0].credentials[0].valid_until: "30/06/2027" is not a date YYYY-MM-DD`},
		{"credential unknown field", "json", `{"businesses":[` + base + `,"credentials":[{"kind":"license","name":"L","verified":true}]}]}`, `businesses[0].credentials[0].verified`},
		{"confirmation window", "json", `{"businesses":[` + base + `,"policies":{"confirmation_window_minutes":-5}}]}`, `businesses[0].policies.confirmation_window_minutes`},
		{"staff services required", "json", `{"businesses":[` + base + `,"staff":[{"reference":"x","name":"X"}]}]}`, `businesses[0].staff[0].services: is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data), tt.format)
			got := strings.Join(problems(t, err), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("problems:\n%s\nwant one containing %q", got, tt.want)
			}
		})
	}
	if _, err := Parse([]byte(`{}`), "xml"); err == nil || errors.As(err, new(*problem.Error)) {
		t.Errorf("unknown format: %v", err)
	}
}

func TestExportRoundTrip(t *testing.T) {
	cats, err := Parse(readFile(t, "catalog.yaml"), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			data, err := Export(cats, format)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(data, format)
			if err != nil {
				t.Fatalf("Parse(Export): %v\n%s", err, data)
			}
			if !reflect.DeepEqual(back, cats) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v\n%s", back, cats, data)
			}
		})
	}
}

// TestExportStoreShape exports a catalog keyed by ids, as the store loads
// it, and reads it back keyed by references.
func TestExportStoreShape(t *testing.T) {
	c := store.Catalog{
		Business: store.Business{ID: "biz_1", Reference: "b", Name: "B", Category: "appointment", TimeZone: "America/Sao_Paulo",
			Currency: "BRL", HorizonDays: 10, SlotIntervalMinutes: 30},
		OpeningHours: []store.HoursWindow{{Weekday: time.Sunday, StartMin: 600, EndMin: 720}},
		Services:     []store.Service{{ID: "svc_1", Reference: "s", Name: "S", DurationMinutes: 45, Currency: "BRL"}},
		Staff:        []store.Staff{{ID: "stf_1", Reference: "x", Name: "X", ServiceIDs: []string{"svc_1"}}},
		StaffHours:   map[string][]store.HoursWindow{"stf_1": {{Weekday: time.Sunday, StartMin: 600, EndMin: 720}}},
		StaffTimeOff: map[string][]store.TimeOff{"stf_1": {{ID: "off_1", StaffID: "stf_1",
			StartsAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), EndsAt: time.Date(2026, 5, 1, 15, 0, 0, 0, time.UTC)}}},
	}
	data, err := Export([]store.Catalog{c}, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "2026-05-01T09:00:00-03:00") {
		t.Errorf("time off should be written in the business's zone:\n%s", data)
	}
	back, err := Parse(data, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := back[0]
	if got.Staff[0].ServiceIDs[0] != "s" || len(got.StaffHours["x"]) != 1 ||
		!got.StaffTimeOff["x"][0].StartsAt.Equal(c.StaffTimeOff["stf_1"][0].StartsAt) || got.Business.HorizonDays != 10 {
		t.Errorf("back = %+v", got)
	}
}

func TestParseWindow(t *testing.T) {
	for _, tt := range []struct {
		in         string
		start, end int
		ok         bool
	}{
		{"09:00-17:30", 540, 1050, true},
		{"00:00-24:00", 0, 1440, true},
		{"24:00-24:00", 0, 0, false},
		{"9:00-17:00", 0, 0, false},
		{"09:60-10:00", 0, 0, false},
		{"10:00-24:30", 0, 0, false},
	} {
		s, e, err := ParseWindow(tt.in)
		if (err == nil) != tt.ok || (tt.ok && (s != tt.start || e != tt.end)) {
			t.Errorf("ParseWindow(%q) = %d, %d, %v", tt.in, s, e, err)
		}
	}
}

func TestNormalizeFormat(t *testing.T) {
	for in, want := range map[string]string{"json": "json", "application/json; charset=utf-8": "json", "YML": "yaml",
		"application/yaml": "yaml", "text/x-yaml": "yaml", "text/plain": ""} {
		if got := NormalizeFormat(in); got != want {
			t.Errorf("NormalizeFormat(%q) = %q", in, got)
		}
	}
}

func TestRestaurantMayHaveNoSlotGrid(t *testing.T) {
	doc := `{"businesses":[{"reference":"r","name":"R","category":"restaurant","timezone":"UTC","currency":"EUR",
	  "policies":{"horizon_days":0,"slot_interval_minutes":0}}]}`
	cats, err := Parse([]byte(doc), "json")
	if err != nil || cats[0].Business.HorizonDays != 0 || cats[0].Business.SlotIntervalMinutes != 0 {
		t.Fatalf("restaurant: %v %+v", err, cats)
	}
	_, err = Parse([]byte(strings.Replace(doc, "restaurant", "appointment", 1)), "json")
	if got := strings.Join(problems(t, err), "\n"); !strings.Contains(got, "horizon_days: must be greater than 0") ||
		!strings.Contains(got, "slot_interval_minutes: must be greater than 0") {
		t.Errorf("appointment business with a zero grid: %s", got)
	}
}

func TestProblemsAreBounded(t *testing.T) {
	doc := "businesses:\n" + strings.Repeat("  - {}\n", MaxProblems)
	got := problems(t, func() error { _, err := Parse([]byte(doc), "yaml"); return err }())
	if len(got) != MaxProblems+1 || !strings.Contains(got[MaxProblems], "more problems") {
		t.Errorf("%d problems, last %q", len(got), got[len(got)-1])
	}
}

// TestParseNormalisesText: names are stored in NFC, so that a decomposed
// "Café" and a composed one are the same name (docs/reference.md §4), and
// a policy text keeps its line breaks.
func TestParseNormalisesText(t *testing.T) {
	data := `{"businesses":[{"reference":"b","name":"Cafe\u0301","category":"appointment","timezone":"UTC","currency":"EUR","policies":{"cancellation_policy":"Line one.\nLine two."}}]}`
	cats, err := Parse([]byte(data), "json")
	if err != nil {
		t.Fatal(err)
	}
	if got := cats[0].Business.Name; got != "Caf\u00e9" {
		t.Errorf("name = %q, want the NFC form %q", got, "Caf\u00e9")
	}
	if got := cats[0].Business.CancellationPolicy; got != "Line one.\nLine two." {
		t.Errorf("cancellation_policy = %q", got)
	}
}
