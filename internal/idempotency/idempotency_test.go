package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/store/storetest"
	"github.com/linkslot/linkslot/internal/testkit"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
)

const (
	link = "lnk_a"
	tool = "create_my_booking"
	key  = "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d"
)

// clock is a settable pinned clock.
type clock = testkit.Clock

// fixture is a store with one business, service and staff member, so that
// mutations can write real bookings.
type fixture struct {
	s      *sqlstore.Store
	faults *storetest.Faults // s as the Keeper sees it
	cat    store.Catalog
	clock  *clock
	k      *idempotency.Keeper[store.Store]
}

func newFixture(t testing.TB, s *sqlstore.Store) *fixture {
	t.Helper()
	cat, err := s.PutCatalog(ctx, store.Catalog{
		Business: store.Business{Reference: "studio", Name: "Hair Studio", Category: store.CategoryAppointment,
			City: "Lisbon", TimeZone: "Europe/Lisbon", AgentBooking: true, Currency: "EUR", HorizonDays: 30, SlotIntervalMinutes: 15},
		OpeningHours: []store.HoursWindow{{Weekday: time.Monday, StartMin: 540, EndMin: 1080}},
		Services:     []store.Service{{Reference: "cut", Name: "Haircut", DurationMinutes: 30, PriceCents: 2500, Currency: "EUR"}},
		Staff:        []store.Staff{{Reference: "ana", Name: "Ana", ServiceIDs: []string{"cut"}}},
		StaffHours:   map[string][]store.HoursWindow{"ana": {{Weekday: time.Monday, StartMin: 540, EndMin: 1080}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.NewClock(t0)
	fs := storetest.WithFaults(s)
	return &fixture{s: s, faults: fs, cat: cat, clock: c, k: idempotency.New(fs, fs.InTx, c.Now, 24*time.Hour)}
}

// insert is a mutation: it books Ana at start through tx and answers the
// booking as JSON.
func (f *fixture) insert(start time.Time, executions *atomic.Int32) func(tx store.Store) ([]byte, error) {
	return func(tx store.Store) ([]byte, error) {
		if executions != nil {
			executions.Add(1)
		}
		b := store.Booking{ID: store.NewID("bkg"), Reference: "LS-" + store.RandomString(5), BusinessID: f.cat.Business.ID,
			ServiceID: f.cat.Services[0].ID, StaffID: f.cat.Staff[0].ID, AccountID: "acc_a", LinkID: link,
			StartsAt: start, EndsAt: start.Add(30 * time.Minute), BlockStart: start, BlockEnd: start.Add(30 * time.Minute),
			Status: store.BookingConfirmed, Version: 1, PriceCents: 2500, Currency: "EUR", CreatedAt: t0, UpdatedAt: t0}
		if err := tx.InsertBooking(ctx, b); err != nil {
			return nil, err
		}
		if err := tx.AddActivity(ctx, store.Activity{AccountID: "acc_a", LinkID: link, ClientID: "cli", Tool: tool,
			Arguments: []byte(`{}`), Summary: "s", ConfirmationText: "yes", IdempotencyKey: key, Outcome: []byte(`{}`), CreatedAt: t0}); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"booking_reference": b.Reference, "status": "confirmed"})
	}
}

func (f *fixture) bookings(t *testing.T) int {
	t.Helper()
	l, err := f.s.ListStaffBookings(ctx, []string{f.cat.Staff[0].ID}, t0.Add(-time.Hour), t0.Add(30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

func (f *fixture) activities(t *testing.T) int {
	t.Helper()
	l, err := f.s.ListActivity(ctx, "acc_a", 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

func (f *fixture) record(t *testing.T) (store.IdempotencyRecord, bool) {
	t.Helper()
	r, err := f.s.GetIdempotency(ctx, link, tool, key)
	if errors.Is(err, store.ErrNotFound) {
		return r, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return r, true
}

func hash(t *testing.T, args any) string {
	t.Helper()
	h, err := idempotency.ArgsHash(args)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

var slot = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC) // a Monday

func TestRunAndReplay(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		var n atomic.Int32
		h := hash(t, map[string]any{"starts_at": "2026-12-07T10:00:00Z"})
		first, replay, err := f.k.Run(ctx, link, tool, key, h, f.insert(slot, &n))
		if err != nil || replay {
			t.Fatalf("first: replay %v err %v", replay, err)
		}
		for i := range 3 {
			again, replay, err := f.k.Run(ctx, link, tool, key, h, f.insert(slot, &n))
			if err != nil || !replay || string(again) != string(first) {
				t.Fatalf("replay %d: %s %v %v", i, again, replay, err)
			}
		}
		if resp, found, err := f.k.Lookup(ctx, link, tool, key, h); err != nil || !found || string(resp) != string(first) {
			t.Fatalf("lookup: %s %v %v", resp, found, err)
		}
		if n.Load() != 1 || f.bookings(t) != 1 || f.activities(t) != 1 {
			t.Fatalf("executions %d, bookings %d, activities %d", n.Load(), f.bookings(t), f.activities(t))
		}
		rec, ok := f.record(t)
		if !ok || rec.State != store.IdemDone || rec.ArgsHash != h || string(rec.Response) != string(first) ||
			!rec.ExpiresAt.Equal(t0.Add(24*time.Hour)) {
			t.Fatalf("record %+v", rec)
		}
	})
}

func TestConflictAndScope(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		var n atomic.Int32
		h1 := hash(t, map[string]any{"starts_at": "2026-12-07T10:00:00Z"})
		h2 := hash(t, map[string]any{"starts_at": "2026-12-07T11:00:00Z"})
		if _, _, err := f.k.Run(ctx, link, tool, key, h1, f.insert(slot, &n)); err != nil {
			t.Fatal(err)
		}
		_, replay, err := f.k.Run(ctx, link, tool, key, h2, f.insert(slot.Add(time.Hour), &n))
		if !errors.Is(err, idempotency.ErrConflict) || replay {
			t.Fatalf("other args: %v %v", replay, err)
		}
		if _, _, err := f.k.Lookup(ctx, link, tool, key, h2); !errors.Is(err, idempotency.ErrConflict) {
			t.Fatalf("lookup other args: %v", err)
		}
		if n.Load() != 1 {
			t.Fatalf("conflict executed: %d", n.Load())
		}
		// The same key is another key for another link or tool.
		if _, replay, err := f.k.Run(ctx, "lnk_b", tool, key, h2, f.insert(slot.Add(time.Hour), &n)); err != nil || replay {
			t.Fatalf("other link: %v %v", replay, err)
		}
		if _, replay, err := f.k.Run(ctx, link, "cancel_my_booking", key, h2, f.insert(slot.Add(2*time.Hour), &n)); err != nil || replay {
			t.Fatalf("other tool: %v %v", replay, err)
		}
		if n.Load() != 3 || f.bookings(t) != 3 {
			t.Fatalf("executions %d bookings %d", n.Load(), f.bookings(t))
		}
	})
}

func TestInvalidKey(t *testing.T) {
	f := newFixture(t, sqltest.SQLite(t))
	for _, k := range []string{"", "short", strings.Repeat("k", 201), "sixteen-chars-\x00x", "clé-de-réessai-0001"} {
		if _, _, err := f.k.Run(ctx, link, tool, k, "h", f.insert(slot, nil)); !errors.Is(err, idempotency.ErrInvalidKey) {
			t.Errorf("%q: %v", k, err)
		}
	}
	if f.bookings(t) != 0 {
		t.Fatal("executed")
	}
}

// A failed mutation keeps nothing: not its writes, not the key. The same key
// then executes.
func TestFailureLeavesNoRecord(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		h := hash(t, map[string]any{"starts_at": "2026-12-07T10:00:00Z"})
		// Someone else holds the slot: the mutation writes its activity,
		// then fails on the overlap.
		if _, _, err := f.k.Run(ctx, "lnk_other", tool, "other-key-0000000000", h, f.insert(slot, nil)); err != nil {
			t.Fatal(err)
		}
		slotTaken := errors.New("slot_taken")
		_, _, err := f.k.Run(ctx, link, tool, key, h, func(tx store.Store) ([]byte, error) {
			if _, err := f.insert(slot.Add(time.Hour), nil)(tx); err != nil {
				return nil, err
			}
			_, err := f.insert(slot, nil)(tx)
			if errors.Is(err, store.ErrOverlap) {
				return nil, slotTaken
			}
			return nil, err
		})
		if !errors.Is(err, slotTaken) {
			t.Fatalf("err = %v", err)
		}
		if _, ok := f.record(t); ok || f.bookings(t) != 1 || f.activities(t) != 1 {
			t.Fatalf("after failure: record %v bookings %d activities %d", ok, f.bookings(t), f.activities(t))
		}
		resp, replay, err := f.k.Run(ctx, link, tool, key, h, f.insert(slot.Add(time.Hour), nil))
		if err != nil || replay || len(resp) == 0 {
			t.Fatalf("retry: %v %v", replay, err)
		}
		if f.bookings(t) != 2 {
			t.Fatalf("bookings %d", f.bookings(t))
		}
	})
}

// A fault between the booking write and the idempotency record leaves both
// or neither; a retry afterwards leaves both.
func TestCrashSafety(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		fault := errors.New("injected fault")
		for _, tc := range []struct {
			name  string
			set   func(f *fixture)
			unset func(f *fixture)
		}{
			{"fault after the booking write",
				func(f *fixture) { f.faults.FailAfterBookingWrite(fault) },
				func(f *fixture) { f.faults.FailAfterBookingWrite(nil) }},
			{"before the record is completed",
				func(f *fixture) {
					f.k = newKeeper(&faultStore{Store: f.s, beforeComplete: func() error { return fault }}, f.clock.Now, 24*time.Hour)
				},
				func(f *fixture) { f.k = idempotency.New(f.s, f.s.InTx, f.clock.Now, 24*time.Hour) }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newFixture(t, s)
				for _, table := range []string{"bookings", "activities", "idempotency_records"} {
					if err := f.s.DB().Exec("DELETE FROM " + table).Error; err != nil {
						t.Fatal(err)
					}
				}
				h := hash(t, map[string]any{"starts_at": "2026-12-07T10:00:00Z"})
				tc.set(f)
				_, _, err := f.k.Run(ctx, link, tool, key, h, f.insert(slot, nil))
				tc.unset(f)
				if !errors.Is(err, fault) {
					t.Fatalf("err = %v", err)
				}
				_, rec := f.record(t)
				if rec || f.bookings(t) != 0 || f.activities(t) != 0 {
					t.Fatalf("partial write: record %v bookings %d activities %d", rec, f.bookings(t), f.activities(t))
				}
				if _, _, err := f.k.Run(ctx, link, tool, key, h, f.insert(slot, nil)); err != nil {
					t.Fatal(err)
				}
				_, rec = f.record(t)
				if !rec || f.bookings(t) != 1 || f.activities(t) != 1 {
					t.Fatalf("after retry: record %v bookings %d activities %d", rec, f.bookings(t), f.activities(t))
				}
			})
		}
	})
}

// Twenty parallel calls with one key: one execution, twenty identical
// answers, nineteen replays. A barrier holds every call until all twenty
// have missed the fast-path lookup, so all twenty race for the claim inside
// their transactions.
func TestConcurrentDuplicates(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		const n = 20
		var passed sync.WaitGroup
		passed.Add(n)
		f.k = newKeeper(&faultStore{Store: f.s, beforeTx: func() { passed.Done(); passed.Wait() }}, f.clock.Now, 24*time.Hour)
		h := hash(t, map[string]any{"starts_at": "2026-12-07T10:00:00Z"})
		var executions atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		resps := make([][]byte, n)
		replays := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				resps[i], replays[i], errs[i] = f.k.Run(ctx, link, tool, key, h, f.insert(slot, &executions))
			}()
		}
		close(start)
		wg.Wait()
		nReplay := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("call %d: %v", i, errs[i])
			}
			if string(resps[i]) != string(resps[0]) {
				t.Fatalf("answers differ: %s vs %s", resps[i], resps[0])
			}
			if replays[i] {
				nReplay++
			}
		}
		if executions.Load() != 1 || nReplay != n-1 || f.bookings(t) != 1 || f.activities(t) != 1 {
			t.Fatalf("executions %d replays %d bookings %d activities %d", executions.Load(), nReplay, f.bookings(t), f.activities(t))
		}
	})
}

func TestPurge(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		k := idempotency.New(s, s.InTx, f.clock.Now, time.Hour) // raised to 24 h
		if k.TTL() != idempotency.MinTTL {
			t.Fatalf("ttl %s", k.TTL())
		}
		h := hash(t, map[string]any{"x": 1})
		var n atomic.Int32
		if _, _, err := k.Run(ctx, link, tool, key, h, f.insert(slot, &n)); err != nil {
			t.Fatal(err)
		}
		f.clock.Add(23 * time.Hour)
		if got, err := k.Purge(ctx); err != nil || got != 0 {
			t.Fatalf("early purge: %d %v", got, err)
		}
		f.clock.Add(2 * time.Hour)
		if got, err := k.Purge(ctx); err != nil || got != 1 {
			t.Fatalf("purge: %d %v", got, err)
		}
		// The key is free again.
		if _, replay, err := k.Run(ctx, link, tool, key, h, f.insert(slot.Add(time.Hour), &n)); err != nil || replay || n.Load() != 2 {
			t.Fatalf("after purge: %v %v %d", replay, err, n.Load())
		}
	})
}

func TestArgsHash(t *testing.T) {
	type args struct {
		BookingReference string  `json:"booking_reference"`
		Grant            string  `json:"grant"`
		StartsAt         string  `json:"requested_starts_at"`
		Staff            *string `json:"with_staff_reference"`
		ConfirmedSummary *string `json:"confirmed_summary,omitempty"`
		Presented        *bool   `json:"confirmation_summary_presented,omitempty"`
		Obtained         *bool   `json:"confirmation_obtained,omitempty"`
		Text             *string `json:"user_confirmation_text,omitempty"`
		Key              *string `json:"idempotency_key,omitempty"`
	}
	str := func(s string) *string { return &s }
	yes := true
	base := args{BookingReference: "LS-1", Grant: "g", StartsAt: "2026-12-07T10:00:00Z"}
	confirmed := base
	confirmed.ConfirmedSummary, confirmed.Presented, confirmed.Obtained = str("summary"), &yes, &yes
	confirmed.Text, confirmed.Key = str("yes please"), str(key)
	reworded := confirmed
	reworded.Text, reworded.ConfirmedSummary, reworded.Key = str("sure, go ahead"), str("another summary"), str("another-key-000000")
	same := []any{
		base, confirmed, reworded,
		map[string]any{"requested_starts_at": "2026-12-07T10:00:00Z", "grant": "g", "booking_reference": "LS-1"},
		map[string]any{"grant": "g", "booking_reference": "LS-1", "requested_starts_at": "2026-12-07T10:00:00Z", "with_staff_reference": nil},
		json.RawMessage(`{"grant":"g","booking_reference":"LS-1","requested_starts_at":"2026-12-07T10:00:00Z","user_confirmation_text":"ok"}`),
	}
	want := hash(t, base)
	for i, a := range same {
		if got := hash(t, a); got != want {
			t.Errorf("same[%d] hashes differently", i)
		}
	}
	withStaff := base
	withStaff.Staff = str("ben")
	different := []any{
		withStaff,
		args{BookingReference: "LS-2", Grant: "g", StartsAt: base.StartsAt},
		args{BookingReference: "LS-1", Grant: "g2", StartsAt: base.StartsAt},
		args{BookingReference: "LS-1", Grant: "g", StartsAt: "2026-12-07T10:15:00Z"},
		map[string]any{"grant": "g", "booking_reference": "LS-1", "requested_starts_at": "2026-12-07T10:00:00Z", "notes": "x"},
		map[string]any{"n": json.Number("1.0")},
		map[string]any{"n": json.Number("1")},
	}
	seen := map[string]int{want: -1}
	for i, a := range different {
		h := hash(t, a)
		if j, dup := seen[h]; dup {
			t.Errorf("different[%d] hashes like %d", i, j)
		}
		seen[h] = i
	}
	if _, err := idempotency.ArgsHash(func() {}); err == nil {
		t.Error("unencodable arguments hashed")
	}
}

// Many agents (distinct links, distinct keys) confirming the same slot at
// once: exactly one booking and one record, every other call sees the
// overlap, and no call fails otherwise (no deadlock between the key claims
// and the overlap check).
func TestConcurrentSameSlot(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		const n = 50
		h := hash(t, map[string]any{"starts_at": "2026-12-07T10:00:00Z"})
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, _, errs[i] = f.k.Run(ctx, "lnk_"+strings.Repeat("x", i+1), tool, key, h, f.insert(slot, nil))
			}()
		}
		close(start)
		wg.Wait()
		ok, overlap := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrOverlap):
				overlap++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}
		var records int64
		if err := f.s.DB().Table("idempotency_records").Count(&records).Error; err != nil {
			t.Fatal(err)
		}
		if ok != 1 || overlap != n-1 || f.bookings(t) != 1 || records != 1 {
			t.Fatalf("ok %d overlap %d bookings %d records %d", ok, overlap, f.bookings(t), records)
		}
	})
}

func TestWithReplayFlag(t *testing.T) {
	got, err := idempotency.WithReplayFlag([]byte(`{"status":"confirmed","booking":{"a":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil || m["idempotent_replay"] != true || m["status"] != "confirmed" {
		t.Fatalf("%s %v", got, err)
	}
	if _, err := idempotency.WithReplayFlag([]byte(`[1]`)); err == nil {
		t.Error("non-object accepted")
	}
}

// BenchmarkRun measures confirmed mutations (claim, one booking insert, one
// activity entry, the stored answer, commit) per second, each with a fresh
// key and slot.
func BenchmarkRun(b *testing.B) {
	for _, be := range sqltest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			s := be.Open(b)
			f := newFixture(b, s)
			h := "bench"
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				at := slot.Add(time.Duration(i) * 31 * time.Minute)
				if _, _, err := f.k.Run(ctx, link, tool, fmt.Sprintf("bench-key-%012d", i), h, f.insert(at, nil)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "mutations/s")
		})
	}
}

// Confirmations of neighbouring, overlapping slots at once (each 30-minute
// block overlaps the ones 10 and 20 minutes away): every call must end as a
// success or an overlap, never another error.
//
// TestConcurrentOverlappingNeighbours: 48 links confirm overlapping
// neighbouring slots of one staff member at once. On PostgreSQL the
// exclusion-constraint checks of concurrent overlapping inserts used to wait
// on each other and deadlock (40P01) or queue past the statement timeout;
// sqlstore now serializes confirmed-booking writes per staff member, so every
// loser gets a clean overlap.
func TestConcurrentOverlappingNeighbours(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		const n = 48
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				at := slot.Add(time.Duration(i%8) * 10 * time.Minute)
				h := hash(t, map[string]any{"starts_at": at.Format(time.RFC3339)})
				insert := f.insert(at, nil)
				// Like the booking engine: re-check the slot through tx,
				// then insert (the constraint decides a race).
				_, _, errs[i] = f.k.Run(ctx, fmt.Sprintf("lnk_%03d", i), tool, key, h, func(tx store.Store) ([]byte, error) {
					bks, err := tx.ListStaffBookings(ctx, []string{f.cat.Staff[0].ID}, at, at.Add(30*time.Minute))
					if err != nil {
						return nil, err
					}
					if len(bks) > 0 {
						return nil, store.ErrOverlap
					}
					return insert(tx)
				})
			}()
		}
		close(start)
		wg.Wait()
		ok, overlap := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrOverlap):
				overlap++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}
		if ok < 1 || ok+overlap != n || f.bookings(t) != ok {
			t.Fatalf("ok %d overlap %d bookings %d", ok, overlap, f.bookings(t))
		}
	})
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("insert booking: %w", fmt.Errorf("%w: %w: 40P01", store.ErrRetry, store.ErrConflict)), true},
		{fmt.Errorf("%w: 40001", store.ErrRetry), true},
		{fmt.Errorf("%w: 55P03", store.ErrConflict), false},
		{store.ErrConflict, false}, // a booking changed since its plan
		{store.ErrOverlap, false},
		{errors.New("40P01 without the sentinel"), false},
	} {
		if got := idempotency.Retryable(tc.err); got != tc.want {
			t.Errorf("%v: %v", tc.err, got)
		}
	}
}
