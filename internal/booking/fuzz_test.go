package booking

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// bytes is a fuzz input reader that answers zeros once exhausted.
type bytes struct {
	b []byte
	i int
}

func (r *bytes) n(max int) int {
	if max <= 0 {
		return 0
	}
	if r.i >= len(r.b) {
		return 0
	}
	v := int(r.b[r.i])
	r.i++
	return v % max
}

var fuzzZones = []string{"UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Havana", "Asia/Kolkata", "Pacific/Chatham", "America/Santiago"}

// fuzzDays are dates around DST changes in those zones, and plain ones.
var fuzzDays = []string{"2026-03-08", "2026-11-01", "2026-03-29", "2026-10-25", "2026-04-05", "2026-10-04", "2026-09-06", "2026-04-04", "2026-06-17"}

// fuzzCatalog builds a random catalog of two services and three staff.
func fuzzCatalog(r *bytes) store.Catalog {
	all := []time.Weekday{0, 1, 2, 3, 4, 5, 6}
	windows := func() [][2]int {
		var ws [][2]int
		for k := 0; k < 1+r.n(3); k++ {
			a := r.n(96) * 15
			b := a + 15*(1+r.n(40))
			ws = append(ws, [2]int{a, min(b, 1440)})
		}
		return ws
	}
	c := store.Catalog{
		Business: store.Business{ID: "biz_f", Reference: "biz-f", Name: "F", Category: store.CategoryAppointment,
			TimeZone: fuzzZones[r.n(len(fuzzZones))], AgentBooking: true, SlotIntervalMinutes: []int{5, 10, 15, 20, 30, 45, 60}[r.n(7)],
			MinNoticeMinutes: r.n(4) * 60, HorizonDays: 1 + r.n(400), Currency: "USD"},
		OpeningHours: weekly(all, windows()...),
		StaffHours:   map[string][]store.HoursWindow{},
		StaffTimeOff: map[string][]store.TimeOff{},
	}
	for i := 0; i < 2; i++ {
		c.Services = append(c.Services, store.Service{ID: fmt.Sprintf("svc_%d", i), BusinessID: "biz_f", Reference: fmt.Sprintf("svc-%d", i),
			Name: "S", DurationMinutes: 5 * (1 + r.n(36)), BufferBeforeMinutes: 5 * r.n(4), BufferAfterMinutes: 5 * r.n(5), Currency: "USD"})
	}
	for i := 0; i < 3; i++ {
		id := fmt.Sprintf("stf_%d", i)
		st := store.Staff{ID: id, BusinessID: "biz_f", Reference: "stf-" + id, Name: id}
		for _, sv := range c.Services {
			if r.n(4) != 0 {
				st.ServiceIDs = append(st.ServiceIDs, sv.ID)
			}
		}
		c.Staff = append(c.Staff, st)
		c.StaffHours[id] = weekly(all, windows()...)
	}
	return c
}

// FuzzEngine: for random catalogs, dates around DST changes and random
// booking sequences, every listed slot validates (and can be booked), every
// accepted booking was a listed slot, and no two accepted bookings of one
// staff member overlap, buffers included.
func FuzzEngine(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("new york gap and overlap with buffers"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytes{b: data}
		c := fuzzCatalog(r)
		e, err := newEntry(c)
		if err != nil {
			t.Fatal(err)
		}
		d := mustDate(t, fuzzDays[r.n(len(fuzzDays))])
		dayStart, _ := resolveLocal(e.loc, d, 0)
		now := dayStart.Add(time.Duration(r.n(48)-24) * time.Hour)
		if r.n(2) == 0 { // sometimes time off for a staff member
			st := c.Staff[r.n(3)].ID
			a := dayStart.Add(time.Duration(r.n(96)) * 15 * time.Minute)
			e.cat.StaffTimeOff[st] = append(e.cat.StaffTimeOff[st], store.TimeOff{StaffID: st, StartsAt: a, EndsAt: a.Add(time.Duration(1+r.n(16)) * 15 * time.Minute)})
		}
		var accepted []store.Booking
		for step := 0; step < 12; step++ {
			st := &e.cat.Staff[r.n(3)]
			sv := &e.cat.Services[r.n(2)]
			if !e.performs(st, sv.ID) {
				continue
			}
			rl := e.rulesAt(now)
			listed := e.slots(st, sv, d, blocksOf(accepted), "", &rl)
			for i, sl := range listed {
				if err := e.validate(st, sv, sl.StartsAt, accepted, "", now); err != nil {
					t.Fatalf("listed slot %s does not validate: %v", sl.StartsAt.Format(time.RFC3339), err)
				}
				if !sl.EndsAt.Equal(sl.StartsAt.Add(time.Duration(sv.DurationMinutes)*time.Minute)) || dateOf(sl.StartsAt) != d {
					t.Fatalf("slot %v has the wrong length or date", sl)
				}
				if i > 0 && !listed[i-1].StartsAt.Before(sl.StartsAt) {
					t.Fatalf("slots out of order: %v then %v", listed[i-1], sl)
				}
			}
			var start time.Time
			if len(listed) > 0 && r.n(3) != 0 {
				start = listed[r.n(len(listed))].StartsAt
			} else {
				start = dayStart.Add(time.Duration(r.n(256)) * 5 * time.Minute)
			}
			if err := e.validate(st, sv, start, accepted, "", now); err != nil {
				continue
			}
			found := false
			for _, sl := range listed {
				found = found || sl.StartsAt.Equal(start)
			}
			if !found {
				t.Fatalf("validate accepted %s, which the engine did not list", start.Format(time.RFC3339))
			}
			end, bs, be := bookingSpan(sv, start)
			accepted = append(accepted, store.Booking{ID: fmt.Sprintf("b%d", step), Reference: fmt.Sprintf("b%d", step), StaffID: st.ID, ServiceID: sv.ID,
				Status: store.BookingConfirmed, StartsAt: store.UTC(start), EndsAt: end, BlockStart: bs, BlockEnd: be})
		}
		assertNoOverlap(t, accepted)
	})
}
