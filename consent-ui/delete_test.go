package consentui_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// TestDeleteAccount: a wrong password or a missing confirmation deletes
// nothing; the right password cancels the upcoming booking through the
// mutation service (Activity "web" entry written, then erased with the
// rest), revokes the link and its tokens, ends the session, erases the
// account while the booking stays for the business, and frees the address.
func TestDeleteAccount(t *testing.T) {
	e := newEnv(t, envOpts{mutations: true})
	bg := context.Background()
	c := e.client()
	acct := c.signUpAndIn("leaving@example.com", testPassword)
	now := e.clock.Now()
	l, err := e.store.UpsertLink(bg, acct.ID, "agent", []string{"openid", "bookings:read"}, now.Add(-time.Hour))
	must(t, err, "link")
	must(t, e.store.CreateTokenSession(bg, store.TokenSession{Kind: store.KindAccessToken, SignatureHash: "del-at", RequestID: "r",
		ClientID: "agent", AccountID: acct.ID, LinkID: l.ID, Active: true, Request: []byte("{}"), ExpiresAt: now.Add(time.Hour), CreatedAt: now}), "token")
	cat, err := e.store.PutCatalog(bg, store.Catalog{
		Business: store.Business{Reference: "studio", Name: "Studio Nord", Category: store.CategoryAppointment, TimeZone: "Europe/Berlin",
			Currency: "EUR", HorizonDays: 60, SlotIntervalMinutes: 15, AgentBooking: true},
		Services: []store.Service{{Reference: "cut", Name: "Haircut", DurationMinutes: 45, PriceCents: 3800, Currency: "EUR"}},
		Staff:    []store.Staff{{Reference: "sam", Name: "Sam", ServiceIDs: []string{"cut"}}},
	})
	must(t, err, "catalog")
	mk := func(ref string, start time.Time) store.Booking {
		b := store.Booking{ID: store.NewID("bkg"), Reference: ref, BusinessID: cat.Business.ID, ServiceID: cat.Services[0].ID,
			StaffID: cat.Staff[0].ID, AccountID: acct.ID, LinkID: l.ID, StartsAt: start, EndsAt: start.Add(45 * time.Minute),
			BlockStart: start, BlockEnd: start.Add(45 * time.Minute), Status: store.BookingConfirmed, Version: 1,
			Notes: "call me on 555-0100", PriceCents: 3800, Currency: "EUR", CreatedAt: now, UpdatedAt: now}
		must(t, e.store.InsertBooking(bg, b), "booking")
		return b
	}
	up := mk("LS-UPCMG", now.Add(72*time.Hour).Truncate(time.Hour))
	past := mk("LS-PASTB", now.Add(-72*time.Hour).Truncate(time.Hour))

	page := c.get("/account/delete")
	if page.status != 200 || !strings.Contains(page.body, "Haircut at Studio Nord") || !strings.Contains(page.body, "Europe/Berlin") {
		t.Fatalf("delete page: %d %s", page.status, page.body)
	}
	unchanged := func(what string) {
		t.Helper()
		if a, err := e.store.GetAccount(bg, acct.ID); err != nil || a.DeletedAt != nil || a.Email != "leaving@example.com" {
			t.Fatalf("%s changed the account: %+v %v", what, a, err)
		}
		if b, _ := e.store.GetBooking(bg, up.ID); b.Status != store.BookingConfirmed {
			t.Fatalf("%s cancelled the booking", what)
		}
		if l2, _ := e.store.GetLink(bg, l.ID); l2.Status != store.LinkActive {
			t.Fatalf("%s revoked the link", what)
		}
	}
	if r := c.post("/account/delete", "/account/delete", url.Values{"password": {"not the password"}, "confirm": {"yes"}}); r.status != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, "password is not correct") {
		t.Fatalf("wrong password: %d", r.status)
	}
	unchanged("a wrong password")
	if r := c.post("/account/delete", "/account/delete", url.Values{"password": {testPassword}}); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("without the confirmation: %d", r.status)
	}
	unchanged("a missing confirmation")

	r := c.post("/account/delete", "/account/delete", url.Values{"password": {testPassword}, "confirm": {"yes"}})
	if r.status != 200 || !strings.Contains(r.body, "Your account was deleted") {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	a, err := e.store.GetAccount(bg, acct.ID)
	must(t, err, "tombstone")
	if a.DeletedAt == nil || a.Email == "leaving@example.com" || a.PasswordHash != "" {
		t.Errorf("tombstone = %+v", a)
	}
	b, _ := e.store.GetBooking(bg, up.ID)
	if b.Status != store.BookingCancelled || b.Notes != "" || b.AccountID != acct.ID {
		t.Errorf("upcoming booking after deletion = %+v", b)
	}
	if p, _ := e.store.GetBooking(bg, past.ID); p.Status != store.BookingConfirmed || p.Notes != "" {
		t.Errorf("past booking after deletion = %+v", p)
	}
	if l2, _ := e.store.GetLink(bg, l.ID); l2.Status != store.LinkRevoked {
		t.Errorf("link = %+v", l2)
	}
	if ts, _ := e.store.GetTokenSession(bg, store.KindAccessToken, "del-at"); ts.Active {
		t.Error("the access token's session is still active")
	}
	if acts, _ := e.store.ListActivity(bg, acct.ID, 10, 0); len(acts) != 0 {
		t.Errorf("activity kept: %+v", acts)
	}
	if r := c.get("/account"); r.status != http.StatusSeeOther {
		t.Errorf("the session survived: %d", r.status)
	}
	if _, err := e.store.GetAccountByEmail(bg, "leaving@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the address is still taken: %v", err)
	}
	fresh := e.client().signUpAndIn("leaving@example.com", testPassword)
	if fresh.ID == acct.ID {
		t.Error("the new sign-up got the deleted account back")
	}
	if strings.Contains(e.logs.String(), testPassword) {
		t.Error("the password reached the logs")
	}
}

// TestThrottledAccountFormsSayWhen: once wrong passwords are throttled,
// the delete and change-password forms answer 429 with Retry-After, like
// the sign-in page, and the page says how long to wait.
func TestThrottledAccountFormsSayWhen(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.client()
	c.signUpAndIn("patient@example.com", testPassword)
	wrong := url.Values{"password": {"not the password"}, "confirm": {"yes"}}
	for i := range 5 {
		if r := c.post("/account/delete", "/account/delete", wrong); r.status != http.StatusUnprocessableEntity {
			t.Fatalf("wrong password %d: %d", i, r.status)
		}
	}
	r := c.post("/account/delete", "/account/delete", wrong)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "Nothing was deleted") {
		t.Fatalf("delete, throttled: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	next := "a brand new long passphrase"
	r = c.post("/account/password", "/account/password", url.Values{"current_password": {"still not it"}, "new_password": {next}, "new_password_repeat": {next}})
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "Wait") {
		t.Fatalf("change password, throttled: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
}
