package booking

import (
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// testCatalog is a one-service, one-staff catalog for engine tests: the
// business and the staff member share the given windows on every weekday
// unless staff windows are given.
type tc struct {
	zone          string
	hours         [][2]int // business windows, every day
	staffHours    [][2]int // staff windows, every day (nil: same as hours)
	interval      int
	duration      int
	before, after int
	notice        int
	horizonDays   int
	timeOff       [][2]time.Time
}

func (c tc) entry(t testing.TB) *catalogEntry {
	t.Helper()
	if c.staffHours == nil {
		c.staffHours = c.hours
	}
	all := []time.Weekday{0, 1, 2, 3, 4, 5, 6}
	cat := store.Catalog{
		Business: store.Business{ID: "biz_1", Reference: "biz-test", Name: "Test", Category: store.CategoryAppointment,
			TimeZone: c.zone, AgentBooking: true, SlotIntervalMinutes: c.interval, MinNoticeMinutes: c.notice,
			HorizonDays: c.horizonDays, Currency: "USD"},
		OpeningHours: weekly(all, c.hours...),
		Services: []store.Service{{ID: "svc_1", BusinessID: "biz_1", Reference: "svc-a", Name: "A", DurationMinutes: c.duration,
			BufferBeforeMinutes: c.before, BufferAfterMinutes: c.after, Currency: "USD"}},
		Staff:        []store.Staff{{ID: "stf_1", BusinessID: "biz_1", Reference: "stf-a", Name: "Ann", ServiceIDs: []string{"svc_1"}}},
		StaffHours:   map[string][]store.HoursWindow{"stf_1": weekly(all, c.staffHours...)},
		StaffTimeOff: map[string][]store.TimeOff{},
	}
	for _, o := range c.timeOff {
		cat.StaffTimeOff["stf_1"] = append(cat.StaffTimeOff["stf_1"], store.TimeOff{StaffID: "stf_1", StartsAt: o[0], EndsAt: o[1]})
	}
	e, err := newEntry(cat)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustDate(t testing.TB, s string) date {
	d, ok := parseDate(s)
	if !ok {
		t.Fatalf("bad date %q", s)
	}
	return d
}

func fmtSlots(sl []Slot) string {
	var parts []string
	for _, s := range sl {
		parts = append(parts, s.StartsAt.Format(time.RFC3339)+"/"+s.EndsAt.Format(time.RFC3339))
	}
	return strings.Join(parts, " ")
}

func ts(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func booked(t testing.TB, id, blockStart, blockEnd string) store.Booking {
	return store.Booking{ID: id, StaffID: "stf_1", Status: store.BookingConfirmed, BlockStart: ts(t, blockStart), BlockEnd: ts(t, blockEnd)}
}

// TestSlotRules pins every slot rule with a fixed now.
func TestSlotRules(t *testing.T) {
	now := ts(t, "2026-06-01T08:00:00Z") // a Monday
	cases := []struct {
		name     string
		c        tc
		date     string
		bookings []store.Booking
		ignore   string
		want     []string // HH:MM local starts
	}{
		{name: "grid aligned to window start", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 10), hm(11, 0)}}, interval: 30, duration: 30},
			date: "2026-06-02", want: []string{"09:10", "09:40", "10:10"}},
		{name: "opening hours intersect staff hours", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 0), hm(12, 0)}}, staffHours: [][2]int{{hm(10, 0), hm(14, 0)}}, interval: 60, duration: 60},
			date: "2026-06-02", want: []string{"10:00", "11:00"}},
		{name: "split shift windows", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 0), hm(18, 0)}}, staffHours: [][2]int{{hm(9, 0), hm(10, 0)}, {hm(15, 0), hm(16, 30)}}, interval: 30, duration: 60},
			date: "2026-06-02", want: []string{"09:00", "15:00", "15:30"}},
		{name: "slot must fit the window", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 0), hm(10, 45)}}, interval: 30, duration: 45},
			date: "2026-06-02", want: []string{"09:00", "09:30", "10:00"}},
		{name: "time off removes slots", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 0), hm(12, 0)}}, interval: 60, duration: 60,
			timeOff: [][2]time.Time{{ts(t, "2026-06-02T09:30:00Z"), ts(t, "2026-06-02T10:00:00Z")}}},
			date: "2026-06-02", want: []string{"10:00", "11:00"}},
		{name: "buffers pad bookings both ways", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 0), hm(13, 0)}}, interval: 30, duration: 30, before: 15, after: 15},
			date: "2026-06-02", bookings: []store.Booking{booked(t, "b1", "2026-06-02T10:45:00Z", "2026-06-02T11:30:00Z")},
			want: []string{"09:00", "09:30", "10:00", "12:00", "12:30"}}, // 11:30 padded to 11:15 meets b1
		{name: "booking being moved does not block", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 0), hm(11, 0)}}, interval: 60, duration: 60},
			date: "2026-06-02", bookings: []store.Booking{booked(t, "b1", "2026-06-02T09:00:00Z", "2026-06-02T10:00:00Z")}, ignore: "b1",
			want: []string{"09:00", "10:00"}},
		{name: "cancelled and other staff bookings do not block", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 0), hm(11, 0)}}, interval: 60, duration: 60},
			date: "2026-06-02", bookings: []store.Booking{
				{ID: "x", StaffID: "stf_1", Status: store.BookingCancelled, BlockStart: ts(t, "2026-06-02T09:00:00Z"), BlockEnd: ts(t, "2026-06-02T10:00:00Z")},
				{ID: "y", StaffID: "stf_2", Status: store.BookingConfirmed, BlockStart: ts(t, "2026-06-02T10:00:00Z"), BlockEnd: ts(t, "2026-06-02T11:00:00Z")}},
			want: []string{"09:00", "10:00"}},
		{name: "past and minimum notice", c: tc{zone: "UTC", hours: [][2]int{{hm(7, 0), hm(11, 0)}}, interval: 60, duration: 60, notice: 90},
			date: "2026-06-01", want: []string{"10:00"}},
		{name: "booking horizon", c: tc{zone: "UTC", hours: [][2]int{{hm(7, 0), hm(10, 0)}}, interval: 60, duration: 60, horizonDays: 3},
			date: "2026-06-04", want: []string{"07:00", "08:00"}},
		{name: "beyond horizon day is empty", c: tc{zone: "UTC", hours: [][2]int{{hm(7, 0), hm(10, 0)}}, interval: 60, duration: 60, horizonDays: 3},
			date: "2026-06-05", want: nil},
		{name: "default interval is 15 minutes", c: tc{zone: "UTC", hours: [][2]int{{hm(9, 0), hm(10, 0)}}, duration: 30},
			date: "2026-06-02", want: []string{"09:00", "09:15", "09:30"}},
		{name: "local zone", c: tc{zone: "Asia/Tokyo", hours: [][2]int{{hm(9, 0), hm(10, 0)}}, interval: 30, duration: 30},
			date: "2026-06-02", want: []string{"09:00", "09:30"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := c.c.entry(t)
			r := e.rulesAt(now)
			var got []string
			for _, s := range e.slots(&e.cat.Staff[0], &e.cat.Services[0], mustDate(t, c.date), blocksOf(c.bookings), c.ignore, &r) {
				got = append(got, s.StartsAt.Format("15:04"))
				if s.StartsAt.Location() != e.loc {
					t.Errorf("slot not in the business zone: %v", s.StartsAt)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("slots = %v, want %v", got, c.want)
			}
		})
	}
}

// TestValidateErrors checks the error each rule answers for a requested start.
func TestValidateErrors(t *testing.T) {
	now := ts(t, "2026-06-01T08:00:00Z")
	e := tc{zone: "UTC", hours: [][2]int{{hm(7, 0), hm(12, 0)}}, interval: 30, duration: 30, notice: 60, horizonDays: 10, after: 30}.entry(t)
	bks := []store.Booking{booked(t, "b1", "2026-06-02T10:00:00Z", "2026-06-02T11:00:00Z")}
	cases := []struct {
		start, want string
	}{
		{"2026-06-01T07:30:00Z", problem.CodeInThePast},
		{"2026-06-01T08:30:00Z", problem.CodeTooSoon},
		{"2026-06-01T09:00:00Z", ""},
		{"2026-06-11T09:00:00Z", problem.CodeBeyondHorizon},
		{"2026-06-02T09:15:00Z", problem.CodeSlotTaken}, // off the grid
		{"2026-06-02T09:30:00Z", problem.CodeSlotTaken}, // its after-buffer meets b1
		{"2026-06-02T09:00:00Z", ""},
		{"2026-06-02T10:30:00Z", problem.CodeSlotTaken}, // inside b1
		{"2026-06-02T11:00:00Z", ""},
		{"2026-06-02T11:45:00Z", problem.CodeSlotTaken}, // does not fit before 12:00
		{"2026-06-02T13:00:00Z", problem.CodeSlotTaken}, // closed
	}
	for _, c := range cases {
		err := e.validate(&e.cat.Staff[0], &e.cat.Services[0], ts(t, c.start), bks, "", now)
		got := ""
		if err != nil {
			got = err.Code
		}
		if got != c.want {
			t.Errorf("validate(%s) = %q, want %q", c.start, got, c.want)
		}
	}
}

// TestDST pins the one local-time rule with exact slots: a skipped local
// time does not exist, a repeated one is its first occurrence.
func TestDST(t *testing.T) {
	now := ts(t, "2026-01-01T00:00:00Z")
	cases := []struct {
		name  string
		c     tc
		date  string
		slots string
	}{
		{"New York spring gap", tc{zone: "America/New_York", hours: [][2]int{{hm(1, 0), hm(4, 0)}}, interval: 30, duration: 30}, "2026-03-08",
			"2026-03-08T01:00:00-05:00/2026-03-08T01:30:00-05:00 2026-03-08T01:30:00-05:00/2026-03-08T03:00:00-04:00 " +
				"2026-03-08T03:00:00-04:00/2026-03-08T03:30:00-04:00 2026-03-08T03:30:00-04:00/2026-03-08T04:00:00-04:00"},
		{"New York autumn overlap", tc{zone: "America/New_York", hours: [][2]int{{hm(0, 0), hm(3, 0)}}, interval: 30, duration: 30}, "2026-11-01",
			"2026-11-01T00:00:00-04:00/2026-11-01T00:30:00-04:00 2026-11-01T00:30:00-04:00/2026-11-01T01:00:00-04:00 " +
				"2026-11-01T01:00:00-04:00/2026-11-01T01:30:00-04:00 2026-11-01T01:30:00-04:00/2026-11-01T01:00:00-05:00 " +
				"2026-11-01T02:00:00-05:00/2026-11-01T02:30:00-05:00 2026-11-01T02:30:00-05:00/2026-11-01T03:00:00-05:00"},
		{"New York ordinary day after the change", tc{zone: "America/New_York", hours: [][2]int{{hm(9, 0), hm(10, 0)}}, interval: 60, duration: 60}, "2026-03-09",
			"2026-03-09T09:00:00-04:00/2026-03-09T10:00:00-04:00"},
		{"London spring gap", tc{zone: "Europe/London", hours: [][2]int{{hm(0, 0), hm(3, 0)}}, interval: 60, duration: 60}, "2026-03-29",
			"2026-03-29T00:00:00Z/2026-03-29T02:00:00+01:00 2026-03-29T02:00:00+01:00/2026-03-29T03:00:00+01:00"},
		{"London autumn overlap", tc{zone: "Europe/London", hours: [][2]int{{hm(0, 0), hm(3, 0)}}, interval: 60, duration: 60}, "2026-10-25",
			"2026-10-25T00:00:00+01:00/2026-10-25T01:00:00+01:00 2026-10-25T01:00:00+01:00/2026-10-25T01:00:00Z " +
				"2026-10-25T02:00:00Z/2026-10-25T03:00:00Z"},
		{"Lord Howe 30-minute spring gap", tc{zone: "Australia/Lord_Howe", hours: [][2]int{{hm(1, 0), hm(4, 0)}}, interval: 30, duration: 30}, "2026-10-04",
			"2026-10-04T01:00:00+10:30/2026-10-04T01:30:00+10:30 2026-10-04T01:30:00+10:30/2026-10-04T02:30:00+11:00 " +
				"2026-10-04T02:30:00+11:00/2026-10-04T03:00:00+11:00 2026-10-04T03:00:00+11:00/2026-10-04T03:30:00+11:00 " +
				"2026-10-04T03:30:00+11:00/2026-10-04T04:00:00+11:00"},
		{"Lord Howe 30-minute autumn overlap", tc{zone: "Australia/Lord_Howe", hours: [][2]int{{hm(1, 0), hm(3, 0)}}, interval: 30, duration: 30}, "2026-04-05",
			"2026-04-05T01:00:00+11:00/2026-04-05T01:30:00+11:00 2026-04-05T01:30:00+11:00/2026-04-05T01:30:00+10:30 " +
				"2026-04-05T02:00:00+10:30/2026-04-05T02:30:00+10:30 2026-04-05T02:30:00+10:30/2026-04-05T03:00:00+10:30"},
		{"Havana skipped midnight", tc{zone: "America/Havana", hours: [][2]int{{hm(0, 0), hm(3, 0)}}, interval: 60, duration: 60}, "2026-03-08",
			"2026-03-08T01:00:00-04:00/2026-03-08T02:00:00-04:00 2026-03-08T02:00:00-04:00/2026-03-08T03:00:00-04:00"},
		{"Havana day before skipped midnight ends at the gap", tc{zone: "America/Havana", hours: [][2]int{{hm(22, 0), hm(24, 0)}}, interval: 60, duration: 60}, "2026-03-07",
			"2026-03-07T22:00:00-05:00/2026-03-07T23:00:00-05:00 2026-03-07T23:00:00-05:00/2026-03-08T01:00:00-04:00"},
		{"Havana repeated midnight hour", tc{zone: "America/Havana", hours: [][2]int{{hm(0, 0), hm(3, 0)}}, interval: 60, duration: 60}, "2026-11-01",
			"2026-11-01T00:00:00-04:00/2026-11-01T00:00:00-05:00 2026-11-01T01:00:00-05:00/2026-11-01T02:00:00-05:00 " +
				"2026-11-01T02:00:00-05:00/2026-11-01T03:00:00-05:00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := c.c.entry(t)
			e.cat.Business.HorizonDays = 400
			r := e.rulesAt(now)
			got := fmtSlots(e.slots(&e.cat.Staff[0], &e.cat.Services[0], mustDate(t, c.date), nil, "", &r))
			if got != c.slots {
				t.Fatalf("slots:\n got  %s\n want %s", got, c.slots)
			}
			// Every listed slot validates; every instant is its own local date.
			for _, f := range strings.Fields(got) {
				s := ts(t, strings.Split(f, "/")[0])
				if err := e.validate(&e.cat.Staff[0], &e.cat.Services[0], s, nil, "", now); err != nil {
					t.Errorf("listed slot %s does not validate: %v", f, err)
				}
			}
		})
	}
}

func TestResolveLocal(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	cases := []struct {
		d      string
		minute int
		want   string
		ok     bool
	}{
		{"2026-03-08", hm(2, 30), "2026-03-08T03:00:00-04:00", false}, // gap → its end
		{"2026-11-01", hm(1, 30), "2026-11-01T01:30:00-04:00", true},  // first occurrence
		{"2026-07-01", 1440, "2026-07-02T00:00:00-04:00", true},
	}
	for _, c := range cases {
		got, ok := resolveLocal(ny, mustDate(t, c.d), c.minute)
		if got.Format(time.RFC3339) != c.want || ok != c.ok {
			t.Errorf("resolveLocal(%s, %d) = %s %v, want %s %v", c.d, c.minute, got.Format(time.RFC3339), ok, c.want, c.ok)
		}
	}
}

func TestDateNextIsCalendar(t *testing.T) {
	d := mustDate(t, "2026-12-31")
	if got := d.next().String(); got != "2027-01-01" {
		t.Fatalf("next = %s", got)
	}
	if got := mustDate(t, "2028-02-28").next().String(); got != "2028-02-29" {
		t.Fatalf("leap next = %s", got)
	}
}

func TestParseInstant(t *testing.T) {
	cases := []struct {
		in   string
		want string // UTC RFC 3339, or "" for invalid_time
	}{
		{"2026-03-10T09:30:00-04:00", "2026-03-10T13:30:00Z"},
		{" 2026-03-10T13:30:00Z ", "2026-03-10T13:30:00Z"},
		{"2026-03-10T13:30:00.000+00:00", "2026-03-10T13:30:00Z"},
		{"2026-03-10T09:30:00", ""},
		{"2026-03-10 09:30", ""},
		{"tomorrow at 9", ""},
		{"", ""},
	}
	for _, c := range cases {
		got, err := ParseInstant("starts_at", c.in)
		if c.want == "" {
			if e, ok := AsError(err); !ok || e.Code != problem.CodeInvalidTime || e.Field != "starts_at" {
				t.Errorf("ParseInstant(%q) = %v, %v; want invalid_time", c.in, got, err)
			}
			continue
		}
		if err != nil || got.Format(time.RFC3339) != c.want {
			t.Errorf("ParseInstant(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}
