package consentui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// TestMyBookingsPending: a booking waiting for the business is listed as
// upcoming, awaiting the business, with its answer-by time in the
// business's zone, and the person may still cancel it (free); a declined
// one is under Cancelled; the Activity page names the member who acted for
// the business (docs/reference.md "Bookings the business answers").
func TestMyBookingsPending(t *testing.T) {
	e := newEnv(t, envOpts{mutations: true, issuer: "http://127.0.0.1:8080"})
	bg := context.Background()
	c := e.client()
	acct := c.signUpAndIn("ada@example.com", testPassword)
	cat := studio(t, e.store)
	now := e.clock.Now()
	soon := time.Date(now.Year()+1, time.January, 14, 9, 0, 0, 0, time.UTC) // 10:00 CET
	p := book(t, e.store, cat, acct, "LS-PENDB", soon, now)
	by := time.Date(now.Year()+1, time.January, 13, 17, 30, 0, 0, time.UTC) // 18:30 CET
	_, err := e.store.UpdateBooking(bg, p.ID, func(b store.Booking) (store.Booking, error) {
		b.Status, b.RespondBy = store.BookingPending, &by
		return b, nil
	})
	must(t, err, "pending")
	d := book(t, e.store, cat, acct, "LS-DECLB", soon.Add(24*time.Hour), now)
	_, err = e.store.UpdateBooking(bg, d.ID, func(b store.Booking) (store.Booking, error) {
		b.Status, b.CancelReason, b.Version = store.BookingDeclined, "We are fully booked that day.", 2
		return b, nil
	})
	must(t, err, "declined")

	r := c.get("/account/bookings")
	for _, want := range []string{"LS-PENDB", "awaiting the business", "Answer by", "(Europe/Berlin, CET)", "18:30",
		`href="/account/bookings/cancel?booking=LS-PENDB"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("upcoming tab lacks %q", want)
		}
	}
	if strings.Contains(r.body, "LS-DECLB") {
		t.Error("a declined booking is listed as upcoming")
	}
	r = c.get("/account/bookings?show=cancelled")
	for _, want := range []string{"LS-DECLB", "declined by the business", "We are fully booked that day."} {
		if !strings.Contains(r.body, want) {
			t.Errorf("cancelled tab lacks %q", want)
		}
	}
	// Cancelling a pending booking costs nothing, whatever the window.
	page := c.get("/account/bookings/cancel?booking=LS-PENDB")
	if sum := formOf(page.body).Get("confirmed_summary"); page.status != 200 || !strings.Contains(sum, "Fee if cancelled now: none.") {
		t.Fatalf("cancel page of a pending booking: %d\n%s", page.status, sum)
	}

	must(t, e.store.AddActivity(bg, store.Activity{AccountID: acct.ID, Via: store.ViaBusiness, Actor: "Olivia Owner",
		Tool: "business:decline", Arguments: []byte(`{}`), Summary: "Booking LS-DECLB declined by the business:", Outcome: []byte(`{}`),
		CreatedAt: now}), "activity")
	r = c.get("/account/activity")
	for _, want := range []string{"The business declined an appointment", "by the business (<bdi>Olivia Owner</bdi>)", "What happened",
		"Booking LS-DECLB declined by the business:"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("activity lacks %q", want)
		}
	}
	if strings.Contains(r.body, "What you said") {
		t.Error("a business action shows the person's words")
	}
}
