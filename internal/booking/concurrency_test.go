package booking

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// race runs n creates at once (plan, then execute in a transaction) and
// counts the outcomes by error code ("" for confirmed).
func race(t *testing.T, f *fixture, reqs []CreateRequest) map[string]int {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, r := range reqs {
		wg.Add(1)
		go func(r CreateRequest) {
			defer wg.Done()
			<-start
			_, err := f.create(ctx, r)
			mu.Lock()
			got[code(err)]++
			mu.Unlock()
		}(r)
	}
	close(start)
	wg.Wait()
	return got
}

func TestConcurrentCreates(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s, bigCatalog("biz-race", 5, 1))
		day := time.Date(2026, 6, 3, 0, 0, 0, 0, time.UTC)
		loc, _ := time.LoadLocation("America/Chicago")
		at := func(h, m int) time.Time { return time.Date(day.Year(), day.Month(), day.Day(), h, m, 0, 0, loc) }

		same := make([]CreateRequest, 50)
		for i := range same {
			same[i] = CreateRequest{AccountID: fmt.Sprintf("acc_%d", i), BusinessRef: "biz-race", ServiceRef: "svc-00", StaffRef: "stf-00", StartsAt: at(9, 0)}
		}
		if got := race(t, f, same); got[""] != 1 || got[problem.CodeSlotTaken] != 49 {
			t.Fatalf("same slot: %v, want 1 confirmed and 49 slot_taken", got)
		}

		var diff []CreateRequest
		for st := 0; st < 5; st++ {
			for k := 0; k < 10; k++ {
				diff = append(diff, CreateRequest{AccountID: fmt.Sprintf("acc_%d_%d", st, k), BusinessRef: "biz-race", ServiceRef: "svc-00",
					StaffRef: fmt.Sprintf("stf-%02d", st), StartsAt: at(12, 30).Add(time.Duration(k) * 30 * time.Minute)})
			}
		}
		if got := race(t, f, diff); got[""] != 50 {
			t.Fatalf("different slots: %v, want 50 confirmed", got)
		}
		bks, err := s.ListStaffBookings(context.Background(), staffIDsOf(t, s, "biz-race"), day.Add(-24*time.Hour), day.Add(48*time.Hour))
		if err != nil || len(bks) != 51 {
			t.Fatalf("%d confirmed bookings, want 51 (%v)", len(bks), err)
		}
		assertNoOverlap(t, bks)
	})
}

// TestConcurrentPendingAndConfirmed: 50 creates of one staff member's time
// at once, half of a service that requires the business's confirmation
// (pending) and half of one that does not: exactly one wins, whichever it
// is, since a pending booking holds its slot as a confirmed one does
// (PostgreSQL's exclusion constraint, SQLite's serialized check).
func TestConcurrentPendingAndConfirmed(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		c := bigCatalog("biz-mixed", 1, 2)
		c.Services[1].RequiresConfirmation = true
		f := newFixture(t, s, c)
		loc, _ := time.LoadLocation("America/Chicago")
		start := time.Date(2026, 6, 3, 9, 0, 0, 0, loc)
		reqs := make([]CreateRequest, 50)
		for i := range reqs {
			reqs[i] = CreateRequest{AccountID: fmt.Sprintf("acc_%d", i), BusinessRef: "biz-mixed", ServiceRef: fmt.Sprintf("svc-%02d", i%2),
				StaffRef: "stf-00", StartsAt: start.Add(time.Duration(i/2%2) * 15 * time.Minute)} // every pair overlaps
		}
		if got := race(t, f, reqs); got[""] != 1 || got[problem.CodeSlotTaken] != 49 {
			t.Fatalf("outcomes %v, want 1 booked and 49 slot_taken", got)
		}
		bks, err := s.ListStaffBookings(context.Background(), staffIDsOf(t, s, "biz-mixed"), start.Add(-24*time.Hour), start.Add(24*time.Hour))
		if err != nil || len(bks) != 1 {
			t.Fatalf("%d slot-holding bookings, want 1 (%v)", len(bks), err)
		}
		cat, err := s.LoadCatalog(context.Background(), "biz-mixed")
		if err != nil {
			t.Fatal(err)
		}
		want := store.BookingConfirmed
		for _, sv := range cat.Services {
			if sv.ID == bks[0].ServiceID && sv.RequiresConfirmation {
				want = store.BookingPending
			}
		}
		if bks[0].Status != want {
			t.Fatalf("the winner is %s, want %s", bks[0].Status, want)
		}
		assertNoOverlap(t, bks)
	})
}

func staffIDsOf(t testing.TB, s store.Store, ref string) []string {
	c, err := s.LoadCatalog(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, st := range c.Staff {
		ids = append(ids, st.ID)
	}
	return ids
}

// assertNoOverlap checks that no two bookings of one staff member that hold
// their slot (pending or confirmed) overlap, buffers included.
func assertNoOverlap(t testing.TB, bks []store.Booking) {
	t.Helper()
	for i, a := range bks {
		for _, b := range bks[i+1:] {
			if a.StaffID == b.StaffID && store.HoldsSlot(a.Status) && store.HoldsSlot(b.Status) &&
				a.BlockStart.Before(b.BlockEnd) && b.BlockStart.Before(a.BlockEnd) {
				t.Fatalf("overlap: %s [%v,%v) and %s [%v,%v)", a.Reference, a.BlockStart, a.BlockEnd, b.Reference, b.BlockStart, b.BlockEnd)
			}
		}
	}
}

// TestConcurrentMoves: ten moves of one booking planned from the same
// version run at once; exactly one wins, the others answer booking_changed
// (or slot_taken when they aimed at the winner's new time), and the booking
// ends at version 2 with one "rescheduled" event.
func TestConcurrentMoves(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		b, err := f.create(ctx, CreateRequest{AccountID: "acc_1", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob", StartsAt: nyTime(t, "2026-06-02 09:00")})
		if err != nil {
			t.Fatal(err)
		}
		var plans []ReschedulePlan
		for k := 0; k < 10; k++ {
			staff := []string{"stf-ann", "stf-bob"}[k%2]
			p, err := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: b.Reference, NewStartsAt: nyTime(t, "2026-06-02 13:00").Add(time.Duration(k/2) * 30 * time.Minute), StaffRef: staff})
			if err != nil {
				t.Fatal(err)
			}
			plans = append(plans, p)
		}
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		for _, p := range plans {
			wg.Add(1)
			go func(p ReschedulePlan) {
				defer wg.Done()
				err := s.InTx(ctx, func(tx store.Store) error { _, err := f.svc.Reschedule(ctx, tx, p); return err })
				mu.Lock()
				got[code(err)]++
				mu.Unlock()
			}(p)
		}
		wg.Wait()
		if got[""] != 1 || got[""]+got[problem.CodeBookingChanged]+got[problem.CodeSlotTaken] != 10 {
			t.Fatalf("outcomes %v, want one success and the rest booking_changed", got)
		}
		cur, _ := s.GetBooking(ctx, b.ID)
		ev, _ := s.ListBookingEvents(ctx, b.ID)
		if cur.Version != 2 || len(ev) != 2 || !ev[1].StartsAt.Equal(b.StartsAt) {
			t.Fatalf("booking %+v events %+v", cur, ev)
		}
	})
}
