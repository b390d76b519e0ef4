package rshttp_test

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/store/storetest"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
)

// race runs fn(i) for i in [0, n) at once and returns the answers.
func race(t *testing.T, n int, fn func(i int) (answer, error)) []answer {
	t.Helper()
	out := make([]answer, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMutationsSameSlotPostgres: 100 agents of 100 people confirm the same
// slot at once. Exactly one books it; the 99 others answer slot_taken.
func TestMutationsSameSlotPostgres(t *testing.T) {
	e := newEnv(t, envOpts{noLimits: true, store: sqltest.Postgres(t)})
	const n = 100
	args := haircut("10:00")
	agents := make([]agent, n)
	summaries := make([]string, n)
	for i := range agents {
		acc := e.mustAccount(fmt.Sprintf("person%03d@example.com", i))
		link, err := e.store.UpsertLink(e.ctx, acc.ID, e.client.ID, []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite}, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		agents[i] = e.agentFor(acc, link, "")
		pre := agents[i].call(tools.CreateMyBooking, args)
		if pre.Status != tools.StatusConfirmationRequired {
			t.Fatalf("preview %d: %s", i, pre.raw)
		}
		summaries[i] = pre.ConfirmedSummary
	}
	got := race(t, n, func(i int) (answer, error) {
		return agents[i].try(tools.CreateMyBooking, confirmed(args, summaries[i], fmt.Sprintf("same-slot-key-%03d-xxxx", i)))
	})
	counts := map[string]int{}
	for _, a := range got {
		switch {
		case !a.isError && a.Status == tools.StatusConfirmed:
			counts["confirmed"]++
		case a.code() == "slot_taken":
			counts["slot_taken"]++
		default:
			counts["other"]++
			t.Errorf("unexpected answer: %s", a.raw)
		}
	}
	if counts["confirmed"] != 1 || counts["slot_taken"] != n-1 || counts["other"] != 0 {
		t.Fatalf("answers %v; want 1 confirmed, %d slot_taken, 0 other", counts, n-1)
	}
	if b, a, r := e.count("bookings"), e.count("activities"), e.count("idempotency_records"); b != 1 || a != 1 || r != 1 {
		t.Fatalf("%d bookings, %d activity entries, %d idempotency records; want 1 each", b, a, r)
	}
}

var replayFlag = regexp.MustCompile(`,"idempotent_replay":true`)

// TestMutationsSameKeyPostgres: 20 retries of one confirmed request (one
// link, one idempotency key) at once execute once and answer the same.
func TestMutationsSameKeyPostgres(t *testing.T) {
	e := newEnv(t, envOpts{noLimits: true, store: sqltest.Postgres(t)})
	const n = 20
	args := haircut("10:00")
	agents := make([]agent, n)
	for i := range agents {
		agents[i] = e.agentFor(e.account, e.link, "")
	}
	pre := agents[0].call(tools.CreateMyBooking, args)
	call := confirmed(args, pre.ConfirmedSummary, "one-key-twenty-retries")
	got := race(t, n, func(i int) (answer, error) { return agents[i].try(tools.CreateMyBooking, call) })
	replays := 0
	first := replayFlag.ReplaceAllString(got[0].raw, "")
	for _, a := range got {
		if a.isError || a.Status != tools.StatusConfirmed {
			t.Fatalf("answer: %s", a.raw)
		}
		if a.IdempotentReplay {
			replays++
		}
		if replayFlag.ReplaceAllString(a.raw, "") != first {
			t.Fatalf("answers differ:\n%s\n%s", a.raw, got[0].raw)
		}
	}
	if replays != n-1 {
		t.Fatalf("%d replays; want %d", replays, n-1)
	}
	if b, a := e.count("bookings"), e.count("activities"); b != 1 || a != 1 {
		t.Fatalf("%d bookings, %d activity entries; want 1 and 1", b, a)
	}
}

// TestMutationsFault: a fault between the booking write and the idempotency
// record leaves neither (nor an Activity entry); the same key then executes.
func TestMutationsFault(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		faults := storetest.WithFaults(s)
		e := newEnv(t, envOpts{noLimits: true, store: s, serve: faults})
		ann := e.agentFor(e.account, e.link, "")
		args := haircut("10:00")
		pre := ann.call(tools.CreateMyBooking, args)
		call := confirmed(args, pre.ConfirmedSummary, "fault-key-0000000001")
		faults.FailAfterBookingWrite(errors.New("injected fault"))
		if a := ann.call(tools.CreateMyBooking, call); a.code() != "server_error" {
			t.Fatalf("fault: %s", a.raw)
		}
		if b, r, a := e.count("bookings"), e.count("idempotency_records"), e.count("activities"); b+r+a != 0 {
			t.Fatalf("after the fault: %d bookings, %d records, %d activity entries", b, r, a)
		}
		faults.FailAfterBookingWrite(nil)
		created := ann.call(tools.CreateMyBooking, call)
		if created.Status != tools.StatusConfirmed || created.IdempotentReplay {
			t.Fatalf("retry after the fault: %s", created.raw)
		}

		// The same for a move: the booking stays as it was.
		move := map[string]any{"booking_reference": created.Booking.Reference, "grant": created.grant(), "requested_starts_at": "2026-03-05T14:00:00-05:00"}
		mp := ann.call(tools.RescheduleMyBooking, move)
		mcall := confirmed(move, mp.ConfirmedSummary, "fault-key-0000000002")
		faults.FailAfterBookingWrite(errors.New("injected fault"))
		if a := ann.call(tools.RescheduleMyBooking, mcall); a.code() != "server_error" {
			t.Fatalf("move fault: %s", a.raw)
		}
		faults.FailAfterBookingWrite(nil)
		if b := e.bookingByRef(created.Booking.Reference); b.Version != 1 || !b.StartsAt.Equal(created.Booking.StartsAt) ||
			e.count("idempotency_records") != 1 || e.count("activities") != 1 {
			t.Fatalf("after the move fault: %+v", b)
		}
		if a := ann.call(tools.RescheduleMyBooking, mcall); a.Status != tools.StatusRescheduled || a.Booking.Version != 2 {
			t.Fatalf("move retry: %s", a.raw)
		}
		_ = store.BookingConfirmed
	})
}
