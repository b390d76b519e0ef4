package consentui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// TestMyWaitlist: the Waitlist tab lists the person's own entries with the
// time held for them; leaving through the form takes them off the list
// (Activity "web:leave_waitlist"), passes the held time to the next person
// waiting (who is told by e-mail through the outbox), and a resent form
// changes nothing more.
func TestMyWaitlist(t *testing.T) {
	e := newEnv(t, envOpts{mutations: true, issuer: "http://127.0.0.1:8080"})
	bg := context.Background()
	c := e.client()
	acct := c.signUpAndIn("ada@example.com", testPassword)
	bob := e.client().signUpAndIn("bob@example.com", testPassword)
	cat := studio(t, e.store)
	now := e.clock.Now()
	day := now.Add(48 * time.Hour).UTC().Format("2006-01-02")
	entry := func(acc store.Account, ref string, minute int) store.WaitlistEntry {
		w := store.WaitlistEntry{ID: store.NewID("wle"), Reference: ref, AccountID: acc.ID, BusinessID: cat.Business.ID,
			ServiceID: cat.Services[0].ID, FromDate: day, ToDate: day, EarliestMin: 0, LatestMin: 1440,
			Status: store.WaitlistWaiting, CreatedAt: now.Add(time.Duration(minute) * time.Minute), UpdatedAt: now}
		must(t, e.store.InsertWaitlistEntry(bg, w), "entry "+ref)
		return w
	}
	mine := entry(acct, "WL-ADA", 0)
	entry(bob, "WL-BOB", 1)
	start := time.Date(now.Year(), now.Month(), now.Day(), 12, 0, 0, 0, time.UTC).Add(48 * time.Hour)
	must(t, e.store.HoldSlot(bg, store.WaitlistOffer{ID: store.NewID("wlo"), Reference: "OF-ADA", EntryID: mine.ID, AccountID: acct.ID,
		BusinessID: cat.Business.ID, ServiceID: cat.Services[0].ID, StaffID: cat.Staff[0].ID, StartsAt: start, EndsAt: start.Add(45 * time.Minute),
		BlockStart: start, BlockEnd: start.Add(45 * time.Minute), HeldUntil: now.Add(30 * time.Minute), CreatedAt: now}), "offer")

	r := c.get("/account/bookings?show=waitlisted")
	for _, want := range []string{"WL-ADA", "Haircut at Studio Nord", "a time is held for you", "OF-ADA", "Leave the waitlist", `aria-current="page">Waitlist`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("waitlist tab lacks %q", want)
		}
	}
	if strings.Contains(r.body, "WL-BOB") {
		t.Error("waitlist tab shows another person's entry")
	}
	form := formOf(r.body)
	left := c.post("/account/bookings?show=waitlisted", "/account/bookings/waitlist/leave", form)
	if left.status != 200 || !strings.Contains(left.body, "goes to the next person waiting") || strings.Contains(left.body, "WL-ADA") {
		t.Fatalf("leave: %d %s", left.status, left.body)
	}
	if w, _ := e.store.GetWaitlistEntry(bg, "WL-ADA"); w.Status != store.WaitlistLeft {
		t.Fatalf("entry after leaving: %+v", w)
	}
	if o, _ := e.store.GetWaitlistOffer(bg, "OF-ADA"); o.Status != store.OfferLapsed {
		t.Fatalf("offer after leaving: %+v", o)
	}
	if w, _ := e.store.GetWaitlistEntry(bg, "WL-BOB"); w.Status != store.WaitlistOffered {
		t.Fatalf("the next person was not offered the time: %+v", w)
	}
	acts, _ := e.store.ListActivity(bg, acct.ID, 10, 0)
	if len(acts) != 1 || acts[0].Tool != "web:leave_waitlist" || acts[0].Via != store.ViaWeb {
		t.Fatalf("activity: %+v", acts)
	}
	again := c.post("/account/bookings?show=waitlisted", "/account/bookings/waitlist/leave", form)
	if again.status != 200 {
		t.Fatalf("resent form: %d %s", again.status, again.body)
	}
	if acts, _ := e.store.ListActivity(bg, acct.ID, 10, 0); len(acts) != 1 {
		t.Fatalf("a resent form recorded %d entries", len(acts))
	}
	_ = bob
}
