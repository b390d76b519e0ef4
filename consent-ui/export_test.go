package consentui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// TestExport: /account/export downloads the account, its links, its
// bookings (named as the person knows them, notes included) and its
// activity as JSON, and nothing secret; without a session it sends the
// browser to sign in.
func TestExport(t *testing.T) {
	e := newEnv(t, envOpts{})
	bg := context.Background()
	c := e.client()
	acct := c.signUpAndIn("ada@example.com", testPassword)
	now := e.clock.Now()
	l, err := e.store.UpsertLink(bg, acct.ID, "agent", []string{"openid", "bookings:read"}, now.Add(-time.Hour))
	must(t, err, "link")
	cat, err := e.store.PutCatalog(bg, store.Catalog{
		Business: store.Business{Reference: "studio", Name: "Studio Nord", Category: store.CategoryAppointment, TimeZone: "Europe/Berlin",
			Currency: "EUR", HorizonDays: 60, SlotIntervalMinutes: 15},
		Services: []store.Service{{Reference: "cut", Name: "Haircut", DurationMinutes: 45, PriceCents: 3800, Currency: "EUR"}},
		Staff:    []store.Staff{{Reference: "sam", Name: "Sam", ServiceIDs: []string{"cut"}}},
	})
	must(t, err, "catalog")
	start := now.Add(48 * time.Hour).Truncate(time.Hour)
	b := store.Booking{ID: store.NewID("bkg"), Reference: "LS-EXPRT", BusinessID: cat.Business.ID, ServiceID: cat.Services[0].ID,
		StaffID: cat.Staff[0].ID, AccountID: acct.ID, LinkID: l.ID, StartsAt: start, EndsAt: start.Add(45 * time.Minute),
		BlockStart: start, BlockEnd: start.Add(45 * time.Minute), Status: store.BookingConfirmed, Version: 1,
		Notes: "Please use the side door", PriceCents: 3800, Currency: "EUR", CreatedAt: now, UpdatedAt: now}
	must(t, e.store.InsertBooking(bg, b), "booking")
	must(t, e.store.AddActivity(bg, store.Activity{ID: store.NewID("act"), AccountID: acct.ID, LinkID: l.ID, ClientID: "agent",
		Tool: "create_my_booking", Arguments: []byte(`{"business_reference":"studio"}`), Summary: "Haircut with Sam at Studio Nord",
		ConfirmationText: "yes, book it", IdempotencyKey: "export-key-0000000001", Outcome: []byte("{}"), CreatedAt: now}), "activity")

	r := c.get("/account/export")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") ||
		!strings.Contains(r.header.Get("Content-Disposition"), "attachment") || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("export: %d %v", r.status, r.header)
	}
	var doc struct {
		Account struct {
			ID, Email string
		}
		Links []struct {
			App, Status string
			Scopes      []string
		}
		Bookings []struct {
			Reference, Business, Service, Staff, Status, Notes, Timezone string
			PriceCents                                                   int64 `json:"price_cents"`
		}
		Activity []struct {
			App, Action, Summary string
			ConfirmationText     string `json:"confirmation_text"`
		}
	}
	must(t, json.Unmarshal([]byte(r.body), &doc), "decode the export")
	if doc.Account.ID != acct.ID || doc.Account.Email != "ada@example.com" {
		t.Errorf("account = %+v", doc.Account)
	}
	if len(doc.Links) != 1 || doc.Links[0].App != "Trip Planner" || doc.Links[0].Status != store.LinkActive || len(doc.Links[0].Scopes) != 2 {
		t.Errorf("links = %+v", doc.Links)
	}
	if len(doc.Bookings) != 1 || doc.Bookings[0].Reference != "LS-EXPRT" || doc.Bookings[0].Business != "Studio Nord" ||
		doc.Bookings[0].Service != "Haircut" || doc.Bookings[0].Staff != "Sam" || doc.Bookings[0].Notes != "Please use the side door" ||
		doc.Bookings[0].PriceCents != 3800 || doc.Bookings[0].Timezone != "Europe/Berlin" {
		t.Errorf("bookings = %+v", doc.Bookings)
	}
	if len(doc.Activity) != 1 || doc.Activity[0].ConfirmationText != "yes, book it" || doc.Activity[0].App != "Trip Planner" ||
		doc.Activity[0].Action != "Booked an appointment" {
		t.Errorf("activity = %+v", doc.Activity)
	}
	for _, secret := range []string{"password", "hash", testPassword, "test:"} {
		if strings.Contains(r.body, secret) {
			t.Errorf("the export contains %q", secret)
		}
	}
	// Someone else's export holds none of this.
	other := e.client()
	other.signUpAndIn("bob@example.com", testPassword)
	if r := other.get("/account/export"); r.status != 200 || strings.Contains(r.body, "LS-EXPRT") || strings.Contains(r.body, "ada@") {
		t.Errorf("another account's export: %d %s", r.status, r.body)
	}
	if r := e.client().get("/account/export"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/login") {
		t.Errorf("without a session: %d %s", r.status, r.header.Get("Location"))
	}
}
