package rshttp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
)

// TestWaitlistTimeOffRemoved: Marcus is off on Wednesday morning, and three
// people wait: one for Wednesday afternoon (who joined first), then one for
// Marcus on Wednesday morning, then one for anyone on Wednesday morning.
// The owner removes the time off in the console (business.Service, wired
// to the waitlist as internal/app wires it): the first morning entry is
// offered 09:00, the one after it 09:45 (the first open start after the
// 09:00 offer and its buffer), each with an e-mail and a waitlist.offered
// webhook; the afternoon entry is not offered; the held slots are hidden
// from a stranger's availability and refused to them with slot_taken; the
// offer books. A second removal that nobody waiting fits offers nothing.
func TestWaitlistTimeOffRemoved(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		n := newNotifiedEnv(t, s, envOpts{offerMinutes: 30})
		e := n.env
		cat, err := s.LoadCatalog(e.ctx, "biz-brightcut-barbers")
		if err != nil {
			t.Fatal(err)
		}
		var marcus string
		for _, st := range cat.Staff {
			if st.Reference == "stf-marcus-reid" {
				marcus = st.ID
			}
		}
		ny, _ := time.LoadLocation("America/New_York")
		morning, err := s.AddTimeOff(e.ctx, cat.Business.ID, store.TimeOff{StaffID: marcus,
			StartsAt: time.Date(2026, 3, 4, 9, 0, 0, 0, ny), EndsAt: time.Date(2026, 3, 4, 12, 0, 0, 0, ny), Reason: "Dentist"})
		if err != nil {
			t.Fatal(err)
		}
		thursday, err := s.AddTimeOff(e.ctx, cat.Business.ID, store.TimeOff{StaffID: marcus,
			StartsAt: time.Date(2026, 3, 5, 9, 0, 0, 0, ny), EndsAt: time.Date(2026, 3, 5, 12, 0, 0, 0, ny)})
		if err != nil {
			t.Fatal(err)
		}

		// The console, with the waitlist wired as the authorization server
		// wires it (app.NewAuthServices).
		muts := app.NewMutations(s, booking.NewService(s, e.clock.Now), nil, n.notes.Notifier, e.clock.Now)
		console, err := business.New(business.Config{Store: s, Clock: e.clock.Now, Freed: app.SpanFreed(muts)})
		if err != nil {
			t.Fatal(err)
		}
		owner := e.mustAccount("owner@brightcut.example")
		if err := s.AddMember(e.ctx, store.Member{BusinessID: cat.Business.ID, AccountID: owner.ID, Role: store.RoleOwner, CreatedAt: e.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		m, err := console.Open(e.ctx, owner.ID, "biz-brightcut-barbers")
		if err != nil {
			t.Fatal(err)
		}

		_, late := e.personAgent("late@example.com")
		first, fa := e.personAgent("first@example.com")
		second, fb := e.personAgent("second@example.com")
		stranger := e.agentFor(e.other, e.newLink(e.other, "stranger-agent"), "")
		late.hdo(tools.JoinMyWaitlist, joinArgs("stf-marcus-reid", "2026-03-04", "2026-03-04", "13:00", "17:00"), "join-key-late-00001")
		fa.hdo(tools.JoinMyWaitlist, joinArgs("stf-marcus-reid", "2026-03-04", "2026-03-04", "09:00", "12:00"), "join-key-first-0001")
		fb.hdo(tools.JoinMyWaitlist, joinArgs("", "2026-03-04", "2026-03-04", "09:00", "12:00"), "join-key-second-001")
		// Dana is free on Wednesday morning too, but nothing frees her
		// time: the second person is offered Marcus's.
		if e.count("waitlist_offers") != 0 {
			t.Fatal("an offer before anything was freed")
		}

		if err := console.RemoveTimeOff(e.ctx, m, morning.ID); err != nil {
			t.Fatal(err)
		}
		at := func(hh, mm int) time.Time { return time.Date(2026, 3, 4, hh, mm, 0, 0, ny) }
		w := waitlisted(t, fa)
		if w.Status != "offered" || w.Offer == nil || w.Offer.StaffReference != "stf-marcus-reid" ||
			!w.Offer.StartsAt.Equal(at(9, 0)) || !w.Offer.HeldUntil.Equal(e.clock.Now().Add(30*time.Minute)) {
			t.Fatalf("first's entry: %+v %+v", w, w.Offer)
		}
		w2 := waitlisted(t, fb)
		if w2.Status != "offered" || w2.Offer == nil || w2.Offer.StaffReference != "stf-marcus-reid" || !w2.Offer.StartsAt.Equal(at(9, 45)) {
			t.Fatalf("second's entry: %+v %+v", w2, w2.Offer)
		}
		if wl := waitlisted(t, late); wl.Status != "waiting" || wl.Offer != nil {
			t.Fatalf("an entry whose window does not cover the span was offered: %+v", wl)
		}
		if e.count("waitlist_offers") != 2 {
			t.Fatalf("%d offers", e.count("waitlist_offers"))
		}
		for _, p := range []struct {
			email, ref string
		}{{first.Email, w.Offer.Reference}, {second.Email, w2.Offer.Reference}} {
			if _, text := n.mailTo(t, p.email, "A time opened up"); !strings.Contains(text, p.ref) {
				t.Fatalf("offer e-mail to %s:\n%s", p.email, text)
			}
		}
		refs := map[any]bool{}
		for _, ev := range n.hooks.waitFor(t, notify.EventWaitlistOffered, 2) {
			refs[ev["data"].(map[string]any)["offer"].(map[string]any)["offer_reference"]] = true
		}
		if !refs[w.Offer.Reference] || !refs[w2.Offer.Reference] {
			t.Fatalf("offer webhooks: %v", refs)
		}

		// Held: hidden from a stranger's availability, refused to them;
		// the rest of the freed morning is open.
		av := stranger.call(tools.CheckBusinessAvailability, map[string]any{"business_reference": "biz-brightcut-barbers",
			"service_reference": "svc-classic-haircut", "local_date": "2026-03-04", "with_staff_reference": "stf-marcus-reid"})
		for _, held := range []string{"T09:00:00-05:00", "T09:15:00-05:00", "T09:45:00-05:00"} {
			if strings.Contains(av.raw, "2026-03-04"+held) {
				t.Fatalf("held slot %s listed: %s", held, av.raw)
			}
		}
		if !strings.Contains(av.raw, "2026-03-04T10:30:00-05:00") {
			t.Fatalf("the freed morning is not open: %s", av.raw)
		}
		if a := stranger.call(tools.CreateMyBooking, haircut("09:00")); a.code() != "slot_taken" {
			t.Fatalf("a stranger books the held slot: %s", a.raw)
		}
		if b := fa.do(tools.CreateMyBooking, offerArgs(w.Offer), "first-books-offer-01"); b.isError || b.Status != "confirmed" {
			t.Fatalf("booking with the offer: %s", b.raw)
		}

		// Thursday's time off removed: nobody waits for Thursday.
		if err := console.RemoveTimeOff(e.ctx, m, thursday.ID); err != nil {
			t.Fatal(err)
		}
		if e.count("waitlist_offers") != 2 {
			t.Fatalf("%d offers after a removal nobody waits for", e.count("waitlist_offers"))
		}
		if wl := waitlisted(t, late); wl.Status != "waiting" {
			t.Fatalf("late after Thursday: %+v", wl)
		}
	})
}
