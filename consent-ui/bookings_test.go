package consentui_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// studio puts a business with one service and one staff member in the
// store: Studio Nord in Berlin, EUR 10.00 for cancelling less than 24 hours
// before, with contact e-mail desk@studio.example.
func studio(t *testing.T, s store.Store) store.Catalog {
	t.Helper()
	cat, err := s.PutCatalog(context.Background(), store.Catalog{
		Business: store.Business{Reference: "studio", Name: "Studio Nord", Category: store.CategoryAppointment, TimeZone: "Europe/Berlin",
			Address: "Torstraße 1, Berlin", Currency: "EUR", HorizonDays: 60, SlotIntervalMinutes: 15, AgentBooking: true,
			CancellationWindowMinutes: 24 * 60, CancellationFeeCents: 1000, CancellationPolicy: "Late cancellations cost EUR 10.00.",
			ContactEmail: "desk@studio.example"},
		Services: []store.Service{{Reference: "cut", Name: "Haircut", DurationMinutes: 45, PriceCents: 3800, Currency: "EUR"}},
		Staff:    []store.Staff{{Reference: "sam", Name: "Sam", ServiceIDs: []string{"cut"}}},
	})
	must(t, err, "catalog")
	return cat
}

// book inserts a confirmed booking of the studio's haircut for acct.
func book(t *testing.T, s store.Store, cat store.Catalog, acct store.Account, ref string, start, now time.Time) store.Booking {
	t.Helper()
	b := store.Booking{ID: store.NewID("bkg"), Reference: ref, BusinessID: cat.Business.ID, ServiceID: cat.Services[0].ID,
		StaffID: cat.Staff[0].ID, AccountID: acct.ID, StartsAt: start, EndsAt: start.Add(45 * time.Minute),
		BlockStart: start, BlockEnd: start.Add(45 * time.Minute), Status: store.BookingConfirmed, Version: 1,
		Notes: "call me on 555-0100", PaymentState: store.PaymentNone, PriceCents: 3800, Currency: "EUR", CreatedAt: now, UpdatedAt: now}
	must(t, s.InsertBooking(context.Background(), b), "booking "+ref)
	return b
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// formOf returns the hidden fields of the page's forms (the last value of
// each name).
func formOf(body string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	return v
}

// TestMyBookings: the three tabs list the person's own bookings with the
// business's local time and zone; Cancel shows the service's summary (the
// policy and the fee due now) and changes nothing; the confirmed form
// cancels through the mutation service (Activity "web", the person's and
// the business's e-mails and the business's webhook queued in the outbox) and a second submit of the same form replays the answer;
// a changed summary, a stale or forged form, another person's booking and
// a booking with a deposit held are refused in words and change nothing.
func TestMyBookings(t *testing.T) {
	e := newEnv(t, envOpts{mutations: true, issuer: "http://127.0.0.1:8080"})
	bg := context.Background()
	c := e.client()
	acct := c.signUpAndIn("ada@example.com", testPassword)
	cat := studio(t, e.store)
	now := e.clock.Now()
	// The studio's booking system takes webhooks of cancellations.
	must(t, e.store.CreateWebhookEndpoint(bg, store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: cat.Business.ID,
		URL: "https://hooks.studio.example/linkslot", Events: []string{"booking.cancelled"}, SecretEncrypted: []byte("sealed"),
		Enabled: true, CreatedAt: now, UpdatedAt: now}), "webhook endpoint")
	// Berlin is UTC+1 in winter, UTC+2 in summer: a fixed January date.
	soon := time.Date(now.Year()+1, time.January, 14, 9, 0, 0, 0, time.UTC) // 10:00 CET
	up := book(t, e.store, cat, acct, "LS-UPCMG", soon, now)
	late := book(t, e.store, cat, acct, "LS-LATEB", now.Add(3*time.Hour).Truncate(time.Minute), now)
	book(t, e.store, cat, acct, "LS-PASTB", now.Add(-72*time.Hour).Truncate(time.Hour), now)
	held := book(t, e.store, cat, acct, "LS-HELDB", soon.Add(24*time.Hour), now)
	_, err := e.store.UpdateBooking(bg, held.ID, func(b store.Booking) (store.Booking, error) {
		b.PaymentState = store.PaymentDepositHeld
		return b, nil
	})
	must(t, err, "deposit")
	other := e.client()
	bob := other.signUpAndIn("bob@example.com", testPassword)
	book(t, e.store, cat, bob, "LS-BOBSB", soon.Add(2*time.Hour), now)

	r := c.get("/account/bookings")
	if r.status != 200 {
		t.Fatalf("bookings: %d", r.status)
	}
	for _, want := range []string{"LS-UPCMG", "LS-LATEB", "LS-HELDB", "Haircut at Studio Nord", "Sam", "EUR 38.00",
		"10:00–10:45 (Europe/Berlin, CET)", "Deposit held by the business", `href="/account/bookings/cancel?booking=LS-UPCMG"`,
		`aria-current="page">Upcoming`, `aria-current="page">My bookings`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("upcoming tab lacks %q", want)
		}
	}
	for _, not := range []string{"LS-PASTB", "LS-BOBSB"} {
		if strings.Contains(r.body, not) {
			t.Errorf("upcoming tab shows %s", not)
		}
	}
	if r := c.get("/account/bookings?show=past"); !strings.Contains(r.body, "LS-PASTB") || strings.Contains(r.body, "LS-UPCMG") ||
		strings.Contains(r.body, "/account/bookings/cancel") {
		t.Errorf("past tab: %s", r.body)
	}
	if r := c.get("/account/bookings?show=cancelled"); !strings.Contains(r.body, "No cancelled bookings") {
		t.Errorf("cancelled tab before any cancellation: %s", r.body)
	}
	if r := c.get("/account/bookings?show=everything"); r.status != http.StatusNotFound {
		t.Errorf("unknown tab: %d", r.status)
	}
	if r := e.client().get("/account/bookings"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/login") {
		t.Errorf("without a session: %d", r.status)
	}

	unchanged := func(what string, b store.Booking) {
		t.Helper()
		if got, _ := e.store.GetBooking(bg, b.ID); got.Status != store.BookingConfirmed || got.Version != b.Version {
			t.Fatalf("%s changed booking %s: %+v", what, b.Reference, got)
		}
		if acts, _ := e.store.ListActivity(bg, acct.ID, 10, 0); len(acts) != 0 {
			t.Fatalf("%s recorded activity: %+v", what, acts)
		}
	}

	// The confirm page: the summary as internal/confirm renders it.
	confirmPage := c.get("/account/bookings/cancel?booking=LS-LATEB")
	if confirmPage.status != 200 {
		t.Fatalf("confirm page: %d %s", confirmPage.status, confirmPage.body)
	}
	form := formOf(confirmPage.body)
	sum := form.Get("confirmed_summary")
	for _, want := range []string{"Cancel booking LS-LATEB:", "Studio Nord", "Late cancellations cost EUR 10.00.", "Fee if cancelled now: EUR 10.00"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if !strings.Contains(html.UnescapeString(confirmPage.body), "<blockquote class=\"summary\" aria-labelledby=\"summary-label\">"+sum+"</blockquote>") {
		t.Error("the page does not show the summary the form confirms")
	}
	if len(form.Get("idempotency_key")) < 16 || form.Get("csrf_token") == "" {
		t.Fatalf("confirm form: %v", form)
	}
	if k2 := formOf(c.get("/account/bookings/cancel?booking=LS-LATEB").body).Get("idempotency_key"); k2 == form.Get("idempotency_key") {
		t.Error("two confirm pages got the same idempotency key")
	}
	unchanged("the confirm page", late)

	// A forged form (no CSRF token) changes nothing.
	forged := url.Values{"booking": {"LS-LATEB"}, "confirmed_summary": {sum}, "idempotency_key": {form.Get("idempotency_key")}}
	if r := c.do(http.MethodPost, "/account/bookings/cancel", forged); r.status != http.StatusForbidden {
		t.Errorf("without CSRF: %d", r.status)
	}
	unchanged("a forged form", late)
	// Another person's booking is not found, and nothing changes.
	if r := c.get("/account/bookings/cancel?booking=LS-BOBSB"); r.status != http.StatusNotFound || !strings.Contains(r.body, "None of your bookings has that reference") {
		t.Errorf("someone else's booking: %d %s", r.status, r.body)
	}
	// A deposit held: refused in words.
	if r := c.get("/account/bookings/cancel?booking=LS-HELDB"); r.status != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, "only be cancelled with the business directly") {
		t.Errorf("deposit held: %d %s", r.status, r.body)
	}
	// A summary that is not the current one: the new summary, nothing cancelled.
	stale := url.Values{"booking": {"LS-LATEB"}, "confirmed_summary": {strings.Replace(sum, "EUR 10.00", "none", 1)},
		"idempotency_key": {form.Get("idempotency_key")}, "csrf_token": {form.Get("csrf_token")}}
	r = c.do(http.MethodPost, "/account/bookings/cancel", stale)
	if r.status != http.StatusConflict || !strings.Contains(r.body, "details changed") || formOf(r.body).Get("confirmed_summary") != sum {
		t.Errorf("changed summary: %d %s", r.status, r.body)
	}
	unchanged("a changed summary", late)

	// Confirm: cancelled, notified, recorded as done on the web.
	r = c.do(http.MethodPost, "/account/bookings/cancel", form)
	if r.status != 200 || !strings.Contains(r.body, "Booking LS-LATEB is cancelled") || !strings.Contains(r.body, "EUR 10.00 (settled with the business)") {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	b, _ := e.store.GetBooking(bg, late.ID)
	if b.Status != store.BookingCancelled || b.CancellationFeeCents != 1000 || b.Version != 2 {
		t.Fatalf("booking after cancel: %+v", b)
	}
	for _, want := range []string{"We are e-mailing you a confirmation", "The business is told by e-mail and through its booking system"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("answer page lacks %q", want)
		}
	}
	msgs, err := e.store.ListMessages(bg, store.OutboxFilter{Channel: store.ChannelEmail})
	must(t, err, "outbox")
	to := map[string]bool{}
	for _, m := range msgs {
		if m.BookingID == late.ID && m.Topic == "booking.cancelled" {
			to[m.Recipient] = true
		}
	}
	if !to["ada@example.com"] || !to["desk@studio.example"] || len(to) != 2 {
		t.Errorf("queued cancellation e-mails to %v", to)
	}
	hooks, err := e.store.ListMessages(bg, store.OutboxFilter{Channel: store.ChannelWebhook})
	must(t, err, "outbox")
	if len(hooks) != 1 || hooks[0].BookingID != late.ID || hooks[0].Topic != "booking.cancelled" ||
		!strings.Contains(string(hooks[0].Payload), `"email":"ada@example.com"`) {
		t.Errorf("queued webhooks: %+v", hooks)
	}
	acts, _ := e.store.ListActivity(bg, acct.ID, 10, 0)
	if len(acts) != 1 || acts[0].Via != store.ViaWeb || acts[0].LinkID != "" || acts[0].Summary != sum ||
		acts[0].ConfirmationText == "" || acts[0].IdempotencyKey != form.Get("idempotency_key") {
		t.Fatalf("activity: %+v", acts)
	}
	// The same form again: the first answer, nothing more.
	r = c.do(http.MethodPost, "/account/bookings/cancel", form)
	if r.status != 200 || !strings.Contains(r.body, "already done when the form was first sent") {
		t.Fatalf("double submit: %d %s", r.status, r.body)
	}
	if b2, _ := e.store.GetBooking(bg, late.ID); b2.Version != 2 {
		t.Fatalf("the double submit changed the booking: %+v", b2)
	}
	if acts, _ := e.store.ListActivity(bg, acct.ID, 10, 0); len(acts) != 1 {
		t.Fatalf("the double submit recorded again: %d entries", len(acts))
	}
	// The same key for another booking is a conflict.
	reuse := url.Values{"booking": {"LS-UPCMG"}, "confirmed_summary": {sum}, "idempotency_key": {form.Get("idempotency_key")}, "csrf_token": {form.Get("csrf_token")}}
	if r := c.do(http.MethodPost, "/account/bookings/cancel", reuse); r.status != http.StatusConflict || !strings.Contains(r.body, "already used for another request") {
		t.Errorf("reused key: %d %s", r.status, r.body)
	}
	if got, _ := e.store.GetBooking(bg, up.ID); got.Status != store.BookingConfirmed {
		t.Fatal("a reused key cancelled another booking")
	}
	// Cancelling it again from a fresh page: already cancelled.
	if r := c.get("/account/bookings/cancel?booking=LS-LATEB"); r.status != 200 || !strings.Contains(r.body, "already cancelled") {
		t.Errorf("cancel a cancelled booking: %d %s", r.status, r.body)
	}

	// Activity and the cancelled tab.
	if r := c.get("/account/activity"); !strings.Contains(r.body, "Cancelled an appointment") || !strings.Contains(r.body, "on the web") {
		t.Errorf("activity page: %s", r.body)
	}
	if r := c.get("/account/bookings?show=cancelled"); !strings.Contains(r.body, "LS-LATEB") || !strings.Contains(r.body, "cancelled") {
		t.Errorf("cancelled tab: %s", r.body)
	}
	if r := c.get("/account"); !strings.Contains(r.body, `href="/account/bookings"`) {
		t.Error("the account page does not link to My bookings")
	}
}
