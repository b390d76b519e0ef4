package feed_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestFeedOfHostileText: a business name, a staff name and a booking's
// notes (as an agent writes them over MCP) holding CR, CRLF and bare LF
// followed by calendar lines give a business feed of content lines that
// end in CRLF only, with one VEVENT and no ATTENDEE the product did not
// write.
func TestFeedOfHostileText(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		inject := "\rATTENDEE:mailto:cr@evil.example\r\nEND:VEVENT\nBEGIN:VEVENT\rUID:x\r"
		cat, err := s.PutCatalog(ctx, store.Catalog{
			Business: store.Business{Reference: "biz-harbor", Name: "Harbor" + inject + "Barbers", Category: store.CategoryAppointment,
				Address: "12 Water St" + inject, TimeZone: "America/New_York", Currency: "USD"},
			Services: []store.Service{{Reference: "cut", Name: "Classic" + inject + "cut", DurationMinutes: 30, Currency: "USD"}},
			Staff:    []store.Staff{{Reference: "ana", Name: "Ana" + inject, ServiceIDs: []string{"cut"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		start := now.Add(48 * time.Hour)
		if err := s.InsertBooking(ctx, store.Booking{ID: store.NewID("bkg"), Reference: "LS-NEXT1", BusinessID: cat.Business.ID,
			ServiceID: cat.Services[0].ID, StaffID: cat.Staff[0].ID, AccountID: "acc_p", StartsAt: start, EndsAt: start.Add(30 * time.Minute),
			BlockStart: start, BlockEnd: start.Add(30 * time.Minute), Status: store.BookingConfirmed, Version: 1, Currency: "USD",
			Notes: "Door code 12" + inject + "ring twice", CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		f, err := feed.New(s, []byte(strings.Repeat("f", 32)), "https://auth.linkslot.test", func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		u, err := f.BusinessFeed(ctx, "biz-harbor", "", false)
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /calendar/{token}", f.Handler())
		srv := httptest.NewServer(mux)
		defer srv.Close()
		resp, err := http.Get(srv.URL + strings.TrimPrefix(u, "https://auth.linkslot.test"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var lines []string // unfolded
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\r\n"), "\r\n") {
			if strings.ContainsAny(l, "\r\n") || len(l) > 75 {
				t.Fatalf("invalid content line %q", l)
			}
			if strings.HasPrefix(l, " ") && len(lines) > 0 {
				lines[len(lines)-1] += l[1:]
			} else {
				lines = append(lines, l)
			}
		}
		count := map[string]int{}
		for _, l := range lines {
			count[l[:strings.IndexAny(l+":", ";:")]]++
			if l == "BEGIN:VEVENT" || l == "END:VEVENT" {
				count[l]++
			}
			if strings.HasPrefix(l, "DESCRIPTION:") && !strings.Contains(l, `Notes: Door code 12\nATTENDEE:mailto:cr@evil.example\nEND:VEVENT\n`) {
				t.Errorf("the notes' lines are not kept as \\n: %q", l)
			}
		}
		if count["BEGIN:VEVENT"] != 1 || count["END:VEVENT"] != 1 || count["ATTENDEE"] != 0 || count["UID"] != 1 {
			t.Fatalf("properties injected: %v\n%s", count, b)
		}
	})
}
