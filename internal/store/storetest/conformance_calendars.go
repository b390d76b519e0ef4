package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// testCalendarTag: a business's calendar tag (StaffDay.CalendarTag) is
// empty while no staff member has a connected calendar, changes whenever
// the stored busy times may have changed (a calendar set, a sync that
// stored something, a calendar removed) and only then, and is empty again
// once the last calendar is removed; CalendarBusyDay answers a day's busy
// times of all the business's calendars, earliest first, under the tag of
// the same snapshot (docs/calendars.md "Availability").
func testCalendarTag(t *testing.T, s store.Store) {
	c := putSample(t, s)
	ana, ben := staffByRef(c, "ana").ID, staffByRef(c, "ben").ID
	tag := func() string {
		t.Helper()
		d, err := s.StaffDay(ctx, c.Business.Reference, []string{ana, ben}, at(0, 0), at(23, 0))
		must(t, err)
		if !d.Found {
			t.Fatal("StaffDay: business not found")
		}
		return d.CalendarTag
	}
	if got := tag(); got != "" {
		t.Fatalf("calendar tag with no calendar = %q, want empty", got)
	}
	for _, id := range []string{ana, ben} {
		must(t, s.PutStaffCalendar(ctx, store.StaffCalendar{StaffID: id, BusinessID: c.Business.ID, Kind: store.CalendarICS,
			URL: "https://cal.example/" + id + ".ics", UpdatedAt: t0}))
	}
	set := tag()
	if set == "" {
		t.Fatal("calendar tag empty after calendars were set")
	}
	sync := func(staff string, busy ...store.CalendarBusy) {
		t.Helper()
		cs := store.CalendarSync{StaffID: staff, At: t0, WindowStart: at(0, 0), WindowEnd: at(23, 0), Busy: busy}
		if len(busy) > 0 {
			cs.Upsert = []store.CalendarObject{{Href: busy[0].Href, Data: "x"}}
		}
		must(t, s.ApplyCalendarSync(ctx, cs))
	}
	sync(ana) // nothing new
	if got := tag(); got != set {
		t.Fatalf("calendar tag after a sync that stored nothing = %q, want %q", got, set)
	}
	sync(ana, store.CalendarBusy{Href: "a.ics", StartsAt: at(11, 0), EndsAt: at(12, 0)})
	sync(ben, store.CalendarBusy{Href: "b.ics", StartsAt: at(9, 0), EndsAt: at(9, 30)})
	synced := tag()
	if synced == set || synced == "" {
		t.Fatalf("calendar tag after syncs that stored busy times = %q (before %q), want a new one", synced, set)
	}
	// day reads the day's busy times, by staff id, with the tags given
	// as known.
	day := func(from, to time.Time, known ...string) (store.CalendarDay, map[string]store.StaffCalendarDay) {
		t.Helper()
		d, err := s.CalendarBusyDay(ctx, c.Business.ID, from, to, known)
		must(t, err)
		by := map[string]store.StaffCalendarDay{}
		for _, sc := range d.Staff {
			by[sc.StaffID] = sc
		}
		return d, by
	}
	d, by := day(at(8, 0), at(13, 0))
	if d.Tag != synced || len(d.Staff) != 2 || len(by[ana].Busy) != 1 || len(by[ben].Busy) != 1 || by[ana].Known || by[ben].Known ||
		by[ana].BusyTag == "" || by[ben].BusyTag == "" || by[ana].BusyTag == by[ben].BusyTag || by[ana].Busy[0].BookingID != store.CalendarBusyID {
		t.Fatalf("CalendarBusyDay = %+v, want ana's and ben's busy times under %q", d, synced)
	}
	sameInstant(t, "busy start", by[ben].Busy[0].BlockStart, at(9, 0))
	sameInstant(t, "busy end", by[ana].Busy[0].BlockEnd, at(12, 0))
	if d, free := day(at(12, 0), at(13, 0)); d.Tag != synced || len(free[ana].Busy)+len(free[ben].Busy) != 0 || len(d.Staff) != 2 {
		t.Fatalf("CalendarBusyDay of a free hour = %+v", d)
	}
	if _, err := s.CalendarBusyDay(ctx, "biz-none", at(8, 0), at(13, 0), nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("CalendarBusyDay of no business: %v, want ErrNotFound", err)
	}
	// A known calendar's busy times are not read again; a calendar whose
	// busy times changed has a new busy tag, and is.
	anaTag, benTag := by[ana].BusyTag, by[ben].BusyTag
	if _, k := day(at(8, 0), at(13, 0), anaTag); !k[ana].Known || len(k[ana].Busy) != 0 || k[ben].Known || len(k[ben].Busy) != 1 {
		t.Fatalf("CalendarBusyDay with ana's tag known = %+v", k)
	}
	sync(ben) // nothing new: the tags stay
	if got := tag(); got != synced {
		t.Fatalf("calendar tag after an unchanged sync = %q, want %q", got, synced)
	}
	sync(ben, store.CalendarBusy{Href: "b2.ics", StartsAt: at(10, 0), EndsAt: at(10, 30)})
	moved, k := day(at(8, 0), at(13, 0), anaTag, benTag)
	if moved.Tag == synced || !k[ana].Known || k[ben].Known || k[ben].BusyTag == benTag || len(k[ben].Busy) != 2 {
		t.Fatalf("CalendarBusyDay after ben's calendar changed = %+v (business tag %q, before %q)", k, moved.Tag, synced)
	}
	synced = moved.Tag
	must(t, s.DeleteStaffCalendar(ctx, ana))
	one := tag()
	if one == synced || one == "" {
		t.Fatalf("calendar tag after one of two calendars was removed = %q, want a new one", one)
	}
	if d, by := day(at(8, 0), at(13, 0)); len(d.Staff) != 1 || len(by[ben].Busy) != 2 {
		t.Fatalf("CalendarBusyDay after ana's calendar was removed = %+v", d)
	}
	must(t, s.DeleteStaffCalendar(ctx, ben))
	if got := tag(); got != "" {
		t.Fatalf("calendar tag once no calendar is left = %q, want empty", got)
	}
	wantErr(t, s.DeleteStaffCalendar(ctx, ben), store.ErrNotFound)
}
