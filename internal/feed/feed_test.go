package feed_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	goical "github.com/emersion/go-ical"

	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestFeeds: a person's feed lists their upcoming bookings and those of the
// last 30 days (cancelled ones with STATUS:CANCELLED), with the invitations'
// UID and SEQUENCE; a business's and a staff member's feeds list theirs; a
// tampered, revoked or replaced URL answers 404. The business's feeds name
// the customer, "Deleted account" once the person deleted theirs, which
// also turns their own feed off.
func TestFeeds(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		cat, err := s.PutCatalog(ctx, store.Catalog{
			Business: store.Business{Reference: "biz-harbor", Name: "Harbor Barbers", Category: store.CategoryAppointment,
				Address: "12 Water St", TimeZone: "America/New_York", Currency: "USD"},
			Services: []store.Service{{Reference: "cut", Name: "Classic cut", DurationMinutes: 30, Currency: "USD"}},
			Staff:    []store.Staff{{Reference: "ana", Name: "Ana", ServiceIDs: []string{"cut"}}, {Reference: "bo", Name: "Bo", ServiceIDs: []string{"cut"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		p := store.Account{ID: "acc_p", Email: "pat@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
		if err := s.CreateAccount(ctx, p); err != nil {
			t.Fatal(err)
		}
		staff := map[string]string{cat.Staff[0].Reference: cat.Staff[0].ID, cat.Staff[1].Reference: cat.Staff[1].ID}
		mk := func(ref, st, account string, start time.Time, status string, version int) {
			b := store.Booking{ID: store.NewID("bkg"), Reference: ref, BusinessID: cat.Business.ID, ServiceID: cat.Services[0].ID,
				StaffID: staff[st], AccountID: account, StartsAt: start, EndsAt: start.Add(30 * time.Minute), BlockStart: start,
				BlockEnd: start.Add(30 * time.Minute), Status: status, Version: version, Currency: "USD", CreatedAt: now, UpdatedAt: now}
			if err := s.InsertBooking(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		mk("LS-NEXT1", "ana", p.ID, now.Add(48*time.Hour), store.BookingConfirmed, 2)
		mk("LS-GONE1", "ana", p.ID, now.Add(72*time.Hour), store.BookingCancelled, 3)
		mk("LS-LAST1", "bo", p.ID, now.Add(-10*24*time.Hour), store.BookingConfirmed, 1)
		mk("LS-OLD01", "ana", p.ID, now.Add(-40*24*time.Hour), store.BookingConfirmed, 1)
		mk("LS-THEM1", "bo", "acc_other", now.Add(24*time.Hour), store.BookingConfirmed, 1)
		// Waiting for the business: TENTATIVE; declined by it: CANCELLED
		// (docs/reference.md "Bookings the business answers").
		mk("LS-WAIT1", "bo", p.ID, now.Add(96*time.Hour), store.BookingPending, 1)
		mk("LS-NOPE1", "ana", p.ID, now.Add(120*time.Hour), store.BookingDeclined, 2)

		f, err := feed.New(s, []byte(strings.Repeat("f", 32)), "https://auth.linkslot.test", func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		if u, err := f.Account(ctx, p.ID); err != nil || u != "" {
			t.Fatalf("feed before turning it on: %q %v", u, err)
		}
		u, err := f.NewAccountFeed(ctx, p.ID)
		if err != nil || !strings.HasPrefix(u, "https://auth.linkslot.test/calendar/") || !strings.HasSuffix(u, ".ics") {
			t.Fatalf("feed URL %q, %v", u, err)
		}
		if again, _ := f.Account(ctx, p.ID); again != u {
			t.Fatalf("the account page shows %q, want %q", again, u)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /calendar/{token}", f.Handler())
		srv := httptest.NewServer(mux)
		defer srv.Close()
		get := func(u string) (int, string, string) {
			resp, err := http.Get(srv.URL + strings.TrimPrefix(u, "https://auth.linkslot.test"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
		}
		code, ct, body := get(u)
		if code != 200 || !strings.HasPrefix(ct, "text/calendar") {
			t.Fatalf("feed: %d %s", code, ct)
		}
		evs := events(t, body)
		if len(evs) != 5 || evs["LS-NEXT1@auth.linkslot.test"] != "CONFIRMED/2" || evs["LS-GONE1@auth.linkslot.test"] != "CANCELLED/3" ||
			evs["LS-LAST1@auth.linkslot.test"] != "CONFIRMED/1" || evs["LS-WAIT1@auth.linkslot.test"] != "TENTATIVE/1" ||
			evs["LS-NOPE1@auth.linkslot.test"] != "CANCELLED/2" {
			t.Fatalf("person's feed %v", evs)
		}

		biz, err := f.BusinessFeed(ctx, "biz-harbor", "", false)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := f.BusinessFeed(ctx, "biz-harbor", "", false); again != biz {
			t.Fatal("feed-url printed a different URL the second time")
		}
		if _, _, body := get(biz); len(events(t, body)) != 6 {
			t.Fatalf("business feed %v", events(t, body))
		}
		// The business's feed names the customer; once the person erased
		// their account, "Deleted account".
		if _, _, body := get(biz); descriptions(t, body)["LS-NEXT1@auth.linkslot.test"] != "Booking LS-NEXT1 with Ana. Customer: pat@example.com." {
			t.Fatalf("business feed descriptions %v", descriptions(t, body))
		}
		bo, err := f.BusinessFeed(ctx, "biz-harbor", "bo", false)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, body := get(bo); len(events(t, body)) != 3 || !strings.Contains(body, "Bo at Harbor Barbers") {
			t.Fatalf("staff feed %v", events(t, body))
		}
		if _, err := f.BusinessFeed(ctx, "biz-harbor", "nobody", false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown staff: %v", err)
		}

		tampered := u[:len(u)-6] + "A.ics"
		if code, _, _ := get(tampered); code != 404 {
			t.Fatalf("tampered URL: %d", code)
		}
		replaced, err := f.NewAccountFeed(ctx, p.ID)
		if err != nil || replaced == u {
			t.Fatal(err)
		}
		if code, _, _ := get(u); code != 404 {
			t.Fatalf("replaced URL: %d", code)
		}
		if code, _, _ := get(replaced); code != 200 {
			t.Fatalf("new URL: %d", code)
		}
		if err := f.TurnOffAccount(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := get(replaced); code != 404 {
			t.Fatalf("URL of a feed turned off: %d", code)
		}
		if code, _, _ := get(biz); code != 200 {
			t.Fatal("turning the person's feed off closed the business's")
		}

		// Deleting the account turns the person's feed off.
		again, err := f.NewAccountFeed(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.EraseAccount(ctx, p.ID, now); err != nil {
			t.Fatal(err)
		}
		if _, _, body := get(biz); descriptions(t, body)["LS-NEXT1@auth.linkslot.test"] != "Booking LS-NEXT1 with Ana. Customer: Deleted account." ||
			strings.Contains(body, "erased.invalid") || strings.Contains(body, "pat@") {
			t.Fatalf("business feed after the erasure: %v", descriptions(t, body))
		}
		if code, _, _ := get(again); code != 404 {
			t.Fatalf("the feed of a deleted account: %d", code)
		}
	})
}

// events decodes a feed with github.com/emersion/go-ical: UID → STATUS/SEQUENCE.
func events(t *testing.T, body string) map[string]string {
	t.Helper()
	cal, err := goical.NewDecoder(strings.NewReader(body)).Decode()
	if err != nil {
		t.Fatalf("feed is not iCalendar: %v\n%s", err, body)
	}
	out := map[string]string{}
	for _, e := range cal.Events() {
		if _, err := e.DateTimeStart(nil); err != nil || e.Props.Get(goical.PropDateTimeStart).Params.Get(goical.PropTimezoneID) != "America/New_York" {
			t.Fatalf("DTSTART: %v", err)
		}
		out[e.Props.Get(goical.PropUID).Value] = e.Props.Get(goical.PropStatus).Value + "/" + e.Props.Get(goical.PropSequence).Value
	}
	return out
}

// descriptions decodes a feed: UID → DESCRIPTION.
func descriptions(t *testing.T, body string) map[string]string {
	t.Helper()
	cal, err := goical.NewDecoder(strings.NewReader(body)).Decode()
	if err != nil {
		t.Fatalf("feed is not iCalendar: %v", err)
	}
	out := map[string]string{}
	for _, e := range cal.Events() {
		d, err := e.Props.Text(goical.PropDescription)
		if err != nil {
			t.Fatal(err)
		}
		out[e.Props.Get(goical.PropUID).Value] = d
	}
	return out
}
