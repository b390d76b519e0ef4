package business_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// Removing time off offers the freed span to the waitlist
// (docs/design.md "The waitlist"). TestWaitlistTimeOffRemoved
// (resourceserver/rshttp) shows the offers end to end, with their e-mails
// and webhooks; these show who is not offered, and the races.

// replica is one process's console wired to the waitlist as internal/app
// wires it, with that process's booking engine and lapsing job. Every
// failed offer is a test error.
type replica struct {
	svc    *business.Service
	worker *app.WaitlistWorker
	// freed is the span entry point itself, as a deleted calendar event
	// would call it.
	freed func(ctx context.Context, businessID, staffID string, start, end time.Time) error
}

func newReplica(t *testing.T, s *sqlstore.Store, clk *clock) replica {
	t.Helper()
	engine := booking.NewService(s, clk.now)
	muts := app.NewMutations(s, engine, nil, nil, clk.now)
	freed := app.SpanFreed(muts)
	svc, err := business.New(business.Config{Store: s, Clock: clk.now,
		Freed: func(ctx context.Context, businessID, staffID string, start, end time.Time) error {
			err := freed(ctx, businessID, staffID, start, end)
			if err != nil {
				t.Errorf("offering a removed time off: %v", err)
			}
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	return replica{svc: svc, worker: &app.WaitlistWorker{Store: s, Engine: engine}, freed: freed}
}

func staffID(t *testing.T, c store.Catalog, ref string) string {
	for _, st := range c.Staff {
		if st.Reference == ref {
			return st.ID
		}
	}
	t.Fatalf("no staff %s", ref)
	return ""
}

func serviceID(t *testing.T, c store.Catalog, ref string) string {
	for _, sv := range c.Services {
		if sv.Reference == ref {
			return sv.ID
		}
	}
	t.Fatalf("no service %s", ref)
	return ""
}

// wait puts an entry on the list (as join_my_waitlist writes it).
func wait(t *testing.T, s store.Store, c store.Catalog, who, service, staff, day string, earliest, latest int, now time.Time) store.WaitlistEntry {
	t.Helper()
	e := store.WaitlistEntry{ID: store.NewID("wle"), Reference: "WL-" + booking.NewReference(), AccountID: who, BusinessID: c.Business.ID,
		ServiceID: serviceID(t, c, service), FromDate: day, ToDate: day, EarliestMin: earliest, LatestMin: latest,
		Status: store.WaitlistWaiting, CreatedAt: now, UpdatedAt: now}
	if staff != "" {
		e.StaffID = staffID(t, c, staff)
	}
	if err := s.InsertWaitlistEntry(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return e
}

type heldRow struct {
	EntryID    string
	StaffID    string
	StartsAt   time.Time
	BlockStart time.Time
	BlockEnd   time.Time
}

func heldOffers(t *testing.T, s *sqlstore.Store) []heldRow {
	t.Helper()
	var rows []heldRow
	if err := s.DB().Raw("SELECT entry_id, staff_id, starts_at, block_start, block_end FROM waitlist_offers WHERE status = ? ORDER BY block_start",
		store.OfferHeld).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestRemovedTimeOffNotOffered: removing time off offers nothing when
// nobody waits, nor to entries it does not match: another staff member
// asked for, a service the staff member does not perform, another day, a
// time of day outside the span. Then an entry that matches is offered the
// first open start in the span.
func TestRemovedTimeOffNotOffered(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		r := newReplica(t, s, f.clk)
		owner, err := r.svc.Open(ctx, "acct_o", f.cat.Business.Reference)
		if err != nil {
			t.Fatal(err)
		}
		marcus := staffID(t, f.cat, "stf-marcus-reid")
		loc := business.Location(f.cat.Business)
		wed := func(hh, mm int) time.Time { return time.Date(2026, 12, 2, hh, mm, 0, 0, loc) }
		off := func() store.TimeOff {
			o, err := r.svc.AddTimeOff(ctx, owner, marcus, wed(9, 0), wed(12, 0), "Dentist")
			if err != nil {
				t.Fatal(err)
			}
			return o
		}

		if err := r.svc.RemoveTimeOff(ctx, owner, off().ID); err != nil {
			t.Fatal(err)
		}
		if n := len(heldOffers(t, s)); n != 0 {
			t.Fatalf("nobody waiting: %d offers", n)
		}

		wait(t, s, f.cat, "acct_w1", "svc-classic-haircut", "stf-dana-kowalski", "2026-12-02", 9*60, 12*60, f.clk.now())
		wait(t, s, f.cat, "acct_w2", "svc-hot-towel-shave", "", "2026-12-02", 9*60, 12*60, f.clk.now())
		wait(t, s, f.cat, "acct_w3", "svc-classic-haircut", "stf-marcus-reid", "2026-12-03", 9*60, 12*60, f.clk.now())
		wait(t, s, f.cat, "acct_w4", "svc-classic-haircut", "", "2026-12-02", 13*60, 17*60, f.clk.now())
		wait(t, s, f.cat, "acct_w5", "svc-classic-haircut", "stf-marcus-reid", "2026-12-02", 9*60, 9*60+20, f.clk.now())
		if err := r.svc.RemoveTimeOff(ctx, owner, off().ID); err != nil {
			t.Fatal(err)
		}
		if h := heldOffers(t, s); len(h) != 0 {
			t.Fatalf("entries the span does not match were offered: %+v", h)
		}

		w := wait(t, s, f.cat, "acct_w6", "svc-skin-fade", "", "2026-12-02", 10*60, 17*60, f.clk.now())
		if err := r.svc.RemoveTimeOff(ctx, owner, off().ID); err != nil {
			t.Fatal(err)
		}
		h := heldOffers(t, s)
		if len(h) != 1 || h[0].EntryID != w.ID || h[0].StaffID != marcus || !h[0].StartsAt.Equal(wed(10, 0)) {
			t.Fatalf("offers: %+v", h)
		}
	})
}

// TestRemovedTimeOffRacePostgres: two replicas, each with its own pool,
// booking engine and lapsing job, on one PostgreSQL database. Each round,
// Marcus has two identical time offs on one morning and eight people wait
// for it, while an offer of 10:00 that morning has run out: the replicas
// remove one time off each while both pass lapsed offers on and both offer
// the morning again through the entry point (as a deleted calendar event
// would), all at once.
// No two held offers ever overlap, nobody holds two, the person whose
// offer lapsed is not offered that slot again (another of the morning, in
// their turn), and the freed morning is offered.
func TestRemovedTimeOffRacePostgres(t *testing.T) {
	raw := sqltest.MustURL(t, "postgres")
	ctx := context.Background()
	open := func() *sqlstore.Store {
		s, err := sqlstore.Open(ctx, raw, sqlstore.Options{MaxOpenConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s1 := open()
	if _, err := s1.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	f := setup(t, s1)
	s2 := open()
	rs := []replica{newReplica(t, s1, f.clk), newReplica(t, s2, f.clk)}
	var owners []business.Membership
	for _, r := range rs {
		m, err := r.svc.Open(ctx, "acct_o", f.cat.Business.Reference)
		if err != nil {
			t.Fatal(err)
		}
		owners = append(owners, m)
	}
	marcus := staffID(t, f.cat, "stf-marcus-reid")
	loc := business.Location(f.cat.Business)
	sv := f.cat.Services[0] // the classic haircut
	if sv.Reference != "svc-classic-haircut" {
		t.Fatalf("first service %s", sv.Reference)
	}
	// Marcus's working days from Tuesday, 1 December, but for his day off.
	days := []int{1, 2, 3, 4, 5, 8}
	for round, d := range days {
		at := func(hh, mm int) time.Time { return time.Date(2026, 12, d, hh, mm, 0, 0, loc) }
		day := at(0, 0).Format("2006-01-02")
		now := f.clk.now()
		var offs []store.TimeOff
		for range 2 {
			o, err := rs[0].svc.AddTimeOff(ctx, owners[0], marcus, at(9, 0), at(12, 0), "")
			if err != nil {
				t.Fatal(err)
			}
			offs = append(offs, o)
		}
		lapsing := wait(t, s1, f.cat, fmt.Sprintf("acct_l%d", round), sv.Reference, "stf-marcus-reid", day, 9*60, 12*60, now)
		if err := s1.HoldSlot(ctx, store.WaitlistOffer{ID: store.NewID("wlo"), Reference: "OF-" + booking.NewReference(), EntryID: lapsing.ID,
			AccountID: lapsing.AccountID, BusinessID: f.cat.Business.ID, ServiceID: sv.ID, StaffID: marcus,
			StartsAt: at(10, 0), EndsAt: at(10, 30), BlockStart: at(10, 0), BlockEnd: at(10, 35),
			HeldUntil: now.Add(-time.Minute), Status: store.OfferHeld, CreatedAt: now.Add(-31 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			staff := ""
			if i%2 == 0 {
				staff = "stf-marcus-reid"
			}
			wait(t, s1, f.cat, fmt.Sprintf("acct_r%d_%d", round, i), sv.Reference, staff, day, 9*60, 12*60, now)
		}

		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i, r := range rs {
			wg.Add(3)
			go func() {
				defer wg.Done()
				<-gate
				if err := r.freed(ctx, f.cat.Business.ID, marcus, at(9, 0), at(12, 0)); err != nil {
					t.Errorf("round %d: span freed: %v", round, err)
				}
			}()
			go func() {
				defer wg.Done()
				<-gate
				if err := r.svc.RemoveTimeOff(ctx, owners[i], offs[i].ID); err != nil {
					t.Errorf("round %d: remove: %v", round, err)
				}
			}()
			go func() {
				defer wg.Done()
				<-gate
				if _, _, err := r.worker.RunOnce(ctx); err != nil {
					t.Errorf("round %d: pass lapsed offers on: %v", round, err)
				}
			}()
		}
		close(gate)
		wg.Wait()

		var mine []heldRow
		for _, h := range heldOffers(t, s1) {
			if h.StartsAt.After(at(0, 0)) && h.StartsAt.Before(at(23, 0)) {
				mine = append(mine, h)
			}
		}
		holders := map[string]bool{}
		for i, h := range mine {
			if holders[h.EntryID] {
				t.Fatalf("round %d: entry %s holds two offers: %+v", round, h.EntryID, mine)
			}
			holders[h.EntryID] = true
			if h.EntryID == lapsing.ID && h.StartsAt.Equal(at(10, 0)) {
				t.Fatalf("round %d: the lapsed entry was offered its slot again: %+v", round, mine)
			}
			if i > 0 && h.BlockStart.Before(mine[i-1].BlockEnd) {
				t.Fatalf("round %d: two held offers overlap: %+v", round, mine)
			}
			if h.StartsAt.Before(at(9, 0)) || !h.StartsAt.Before(at(12, 0)) {
				t.Fatalf("round %d: an offer outside the freed morning: %+v", round, mine)
			}
		}
		// The morning fits four haircuts with their buffer around any
		// 10:00 offer, however the passes and removals interleave.
		if len(mine) != 4 {
			t.Fatalf("round %d: %d offers of the freed morning, want 4: %+v", round, len(mine), mine)
		}
		var offered int64
		if err := s1.DB().Raw("SELECT COUNT(*) FROM waitlist_entries WHERE business_id = ? AND status = ? AND from_date = ?",
			f.cat.Business.ID, store.WaitlistOffered, day).Scan(&offered).Error; err != nil {
			t.Fatal(err)
		}
		if offered != int64(len(mine)) {
			t.Fatalf("round %d: %d entries offered, %d offers held", round, offered, len(mine))
		}
	}
}
