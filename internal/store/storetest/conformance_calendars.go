package storetest

import (
	"errors"
	"testing"

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
	d, err := s.CalendarBusyDay(ctx, c.Business.ID, at(8, 0), at(13, 0))
	must(t, err)
	if d.Tag != synced || len(d.Busy) != 2 || d.Busy[0].StaffID != ben || d.Busy[1].StaffID != ana ||
		d.Busy[0].BookingID != store.CalendarBusyID {
		t.Fatalf("CalendarBusyDay = %+v, want ben's then ana's busy time under %q", d, synced)
	}
	sameInstant(t, "busy start", d.Busy[0].BlockStart, at(9, 0))
	sameInstant(t, "busy end", d.Busy[1].BlockEnd, at(12, 0))
	if d, err := s.CalendarBusyDay(ctx, c.Business.ID, at(12, 0), at(13, 0)); err != nil || len(d.Busy) != 0 || d.Tag != synced {
		t.Fatalf("CalendarBusyDay of a free hour = %+v, %v", d, err)
	}
	if _, err := s.CalendarBusyDay(ctx, "biz-none", at(8, 0), at(13, 0)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("CalendarBusyDay of no business: %v, want ErrNotFound", err)
	}
	must(t, s.DeleteStaffCalendar(ctx, ana))
	one := tag()
	if one == synced || one == "" {
		t.Fatalf("calendar tag after one of two calendars was removed = %q, want a new one", one)
	}
	d, err = s.CalendarBusyDay(ctx, c.Business.ID, at(8, 0), at(13, 0))
	must(t, err)
	if len(d.Busy) != 1 || d.Busy[0].StaffID != ben {
		t.Fatalf("CalendarBusyDay after ana's calendar was removed = %+v", d)
	}
	must(t, s.DeleteStaffCalendar(ctx, ben))
	if got := tag(); got != "" {
		t.Fatalf("calendar tag once no calendar is left = %q, want empty", got)
	}
	wantErr(t, s.DeleteStaffCalendar(ctx, ben), store.ErrNotFound)
}
