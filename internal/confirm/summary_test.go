package confirm_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
	_ "time/tzdata" // the tests do not depend on the host's zone files

	"github.com/linkslot/linkslot/internal/confirm"
)

var update = flag.Bool("update", false, "rewrite the golden summaries in testdata/")

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func appt(t *testing.T) confirm.Appointment {
	ny := zone(t, "America/New_York")
	start := time.Date(2026, 12, 8, 10, 0, 0, 0, ny)
	return confirm.Appointment{
		BusinessName: "Harbor Dental", BusinessAddress: "12 Water St, Brooklyn",
		ServiceName: "Cleaning", StaffName: "Dr. Ana Ruiz",
		Start: start.UTC(), End: start.Add(45 * time.Minute).UTC(), Location: ny,
		Price: confirm.Money{Cents: 12000, Currency: "USD"},
	}
}

func policy() confirm.Policy {
	return confirm.Policy{Text: "Please give 24 hours' notice.", LateWindow: 24 * time.Hour,
		Fee: confirm.Money{Cents: 2500, Currency: "USD"}}
}

func createFacts(t *testing.T) confirm.CreateFacts {
	return confirm.CreateFacts{Appointment: appt(t), Policy: policy(), Notes: "First visit.\nSensitive gums.",
		PrivacyNotice: "Harbor Dental keeps records for 7 years."}
}

func rescheduleFacts(t *testing.T) confirm.RescheduleFacts {
	to := appt(t)
	to.Start, to.End = to.Start.Add(26*time.Hour), to.End.Add(26*time.Hour)
	to.StaffName = "Dr. Bo Chen"
	return confirm.RescheduleFacts{BookingReference: "LS-7Q2K9", From: appt(t), To: to, Policy: policy()}
}

func cancelFacts(t *testing.T) confirm.CancelFacts {
	return confirm.CancelFacts{BookingReference: "LS-7Q2K9", Appointment: appt(t), Policy: policy(),
		FeeNow: confirm.Money{Cents: 2500, Currency: "USD"}, Reason: "Travelling"}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestLocalSpan(t *testing.T) {
	a := appt(t)
	if got, want := confirm.LocalSpan(a.Start, a.End, a.Location), "Tuesday 8 December 2026, 10:00–10:45 (America/New_York, EST)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Across the November DST change: 01:30 EDT to 01:15 EST.
	ny := a.Location
	s := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC) // 01:30 EDT
	if got, want := confirm.LocalSpan(s, s.Add(45*time.Minute), ny), "Sunday 1 November 2026, 01:30–01:15 (America/New_York, EDT→EST)"; got != want {
		t.Errorf("DST: got %q, want %q", got, want)
	}
	// Past midnight.
	s = time.Date(2026, 12, 9, 4, 30, 0, 0, time.UTC) // 23:30 EST on the 8th
	if got, want := confirm.LocalSpan(s, s.Add(time.Hour), ny), "Tuesday 8 December 2026, 23:30–Wednesday 9 December 2026, 00:30 (America/New_York, EST)"; got != want {
		t.Errorf("midnight: got %q, want %q", got, want)
	}
}

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		m    confirm.Money
		want string
	}{
		{confirm.Money{Cents: 12000, Currency: "USD"}, "USD 120.00"},
		{confirm.Money{Cents: 5, Currency: "EUR"}, "EUR 0.05"},
		{confirm.Money{Cents: 4500, Currency: "JPY"}, "JPY 4500"},
		{confirm.Money{Cents: 1500, Currency: "KWD"}, "KWD 1.500"},
		{confirm.Money{Cents: -250, Currency: "GBP"}, "GBP -2.50"},
	} {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.m, got, tc.want)
		}
	}
}

func TestSummariesGolden(t *testing.T) {
	c, err := confirm.CreateSummary(createFacts(t))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "create", c)
	r, err := confirm.RescheduleSummary(rescheduleFacts(t))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "reschedule", r)
	x, err := confirm.CancelSummary(cancelFacts(t))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "cancel", x)
}

// Same facts, byte-identical text; every changed fact, a different text.
func TestSummariesDeterministicAndComplete(t *testing.T) {
	la := zone(t, "America/Los_Angeles")
	type variant struct {
		name string
		text func() (string, error)
	}
	create := func(edit func(*confirm.CreateFacts)) func() (string, error) {
		return func() (string, error) {
			f := createFacts(t)
			if edit != nil {
				edit(&f)
			}
			return confirm.CreateSummary(f)
		}
	}
	resched := func(edit func(*confirm.RescheduleFacts)) func() (string, error) {
		return func() (string, error) {
			f := rescheduleFacts(t)
			if edit != nil {
				edit(&f)
			}
			return confirm.RescheduleSummary(f)
		}
	}
	cancel := func(edit func(*confirm.CancelFacts)) func() (string, error) {
		return func() (string, error) {
			f := cancelFacts(t)
			if edit != nil {
				edit(&f)
			}
			return confirm.CancelSummary(f)
		}
	}
	groups := map[string][]variant{
		"create": {
			{"base", create(nil)},
			{"business", create(func(f *confirm.CreateFacts) { f.BusinessName = "Harbour Dental" })},
			{"address", create(func(f *confirm.CreateFacts) { f.BusinessAddress = "14 Water St, Brooklyn" })},
			{"service", create(func(f *confirm.CreateFacts) { f.ServiceName = "Whitening" })},
			{"staff", create(func(f *confirm.CreateFacts) { f.StaffName = "Dr. Bo Chen" })},
			{"start", create(func(f *confirm.CreateFacts) { f.Start = f.Start.Add(15 * time.Minute) })},
			{"end", create(func(f *confirm.CreateFacts) { f.End = f.End.Add(15 * time.Minute) })},
			{"zone", create(func(f *confirm.CreateFacts) { f.Location = la })},
			{"price", create(func(f *confirm.CreateFacts) { f.Price.Cents++ })},
			{"currency", create(func(f *confirm.CreateFacts) { f.Price.Currency = "CAD" })},
			{"policy text", create(func(f *confirm.CreateFacts) { f.Policy.Text = "No refunds." })},
			{"policy window", create(func(f *confirm.CreateFacts) { f.Policy.LateWindow = 48 * time.Hour })},
			{"policy fee", create(func(f *confirm.CreateFacts) { f.Policy.Fee.Cents = 3000 })},
			{"no fee", create(func(f *confirm.CreateFacts) { f.Policy.Fee.Cents = 0 })},
			{"notes", create(func(f *confirm.CreateFacts) { f.Notes = "First visit." })},
			{"notes whitespace", create(func(f *confirm.CreateFacts) { f.Notes = "First visit.  \nSensitive gums." })},
			{"no notes", create(func(f *confirm.CreateFacts) { f.Notes = "" })},
			{"privacy", create(func(f *confirm.CreateFacts) { f.PrivacyNotice = "" })},
		},
		"reschedule": {
			{"base", resched(nil)},
			{"reference", resched(func(f *confirm.RescheduleFacts) { f.BookingReference = "LS-7Q2K8" })},
			{"old start", resched(func(f *confirm.RescheduleFacts) { f.From.Start = f.From.Start.Add(-time.Hour) })},
			{"old staff", resched(func(f *confirm.RescheduleFacts) { f.From.StaffName = "Dr. Cy Diaz" })},
			{"new start", resched(func(f *confirm.RescheduleFacts) { f.To.Start = f.To.Start.Add(15 * time.Minute) })},
			{"new end", resched(func(f *confirm.RescheduleFacts) { f.To.End = f.To.End.Add(time.Hour) })},
			{"new staff", resched(func(f *confirm.RescheduleFacts) { f.To.StaffName = "Dr. Ana Ruiz" })},
			{"price", resched(func(f *confirm.RescheduleFacts) { f.To.Price.Cents = 13000 })},
			{"business", resched(func(f *confirm.RescheduleFacts) { f.To.BusinessName = "Other" })},
			{"service", resched(func(f *confirm.RescheduleFacts) { f.To.ServiceName = "Other" })},
			{"zone", resched(func(f *confirm.RescheduleFacts) { f.To.Location = la })},
			{"fee", resched(func(f *confirm.RescheduleFacts) { f.Policy.Fee.Cents = 1 })},
		},
		"cancel": {
			{"base", cancel(nil)},
			{"reference", cancel(func(f *confirm.CancelFacts) { f.BookingReference = "LS-AAAAA" })},
			{"fee now", cancel(func(f *confirm.CancelFacts) { f.FeeNow.Cents = 0 })},
			{"reason", cancel(func(f *confirm.CancelFacts) { f.Reason = "" })},
			{"start", cancel(func(f *confirm.CancelFacts) { f.Start = f.Start.Add(time.Minute) })},
			{"staff", cancel(func(f *confirm.CancelFacts) { f.StaffName = "X" })},
			{"policy", cancel(func(f *confirm.CancelFacts) { f.Policy.Text = "" })},
			{"price", cancel(func(f *confirm.CancelFacts) { f.Price.Cents = 0 })},
		},
	}
	for group, vs := range groups {
		seen := map[string]string{}
		for _, v := range vs {
			a, err := v.text()
			if err != nil {
				t.Fatalf("%s/%s: %v", group, v.name, err)
			}
			b, _ := v.text()
			if a != b {
				t.Errorf("%s/%s: not deterministic", group, v.name)
			}
			if prev, dup := seen[a]; dup {
				t.Errorf("%s: %q and %q give the same summary", group, prev, v.name)
			}
			seen[a] = v.name
		}
	}
}

func TestSummariesRefuseIncompleteFacts(t *testing.T) {
	f := createFacts(t)
	f.Location = nil
	if _, err := confirm.CreateSummary(f); err == nil {
		t.Error("create without zone")
	}
	r := rescheduleFacts(t)
	r.To.StaffName = ""
	if _, err := confirm.RescheduleSummary(r); err == nil {
		t.Error("reschedule without staff")
	}
	c := cancelFacts(t)
	c.End = c.Start
	if _, err := confirm.CancelSummary(c); err == nil {
		t.Error("cancel with empty span")
	}
}
