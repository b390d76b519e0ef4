package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// TestUpgradeFromInitialSchema fills a database at the first schema version
// (accounts, a client, a link, token sessions, a catalog and bookings, with
// that version's own columns), applies every later migration, and checks
// that the product keeps working on it: the old rows read back unchanged,
// availability still avoids the old booking, the no-overlap rule still
// holds, bookings still move and cancel, and the notification tables work.
func TestUpgradeFromInitialSchema(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s := openFirstSchema(t, backend)
			fillInitialSchema(t, s)
			n, err := s.Migrate(ctx)
			if err != nil {
				t.Fatalf("upgrade: %v", err)
			}
			if n < 1 {
				t.Fatalf("upgrade applied %d migrations, want at least 1", n)
			}
			if err := s.Ping(ctx); err != nil {
				t.Fatalf("ping after upgrade: %v", err)
			}
			checkUpgraded(t, s)
		})
	}
}

var upgradeCreated = time.Date(2026, 2, 20, 9, 0, 0, 0, time.UTC)

func fillInitialSchema(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	at := upgradeCreated
	exec := func(q string, args ...any) {
		t.Helper()
		if err := s.DB().Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO accounts (id, email, password_hash, admin, disabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		"acct_old", "old@example.com", "$argon2id$v=19$m=65536,t=1,p=2$c2FsdHNhbHQ$aGFzaGhhc2g", false, false, at, at)
	exec(`INSERT INTO clients (id, name, secret_hash, public, redirect_uris, allowed_scopes, default_scopes, grant_types, created_at, updated_at)
		VALUES (?, ?, '', ?, ?, ?, ?, ?, ?, ?)`, "old-client", "Old client", true, `["http://127.0.0.1/callback"]`,
		`["openid","bookings:read","bookings:write"]`, `["bookings:read","bookings:write"]`, `["authorization_code","refresh_token"]`, at, at)
	exec(`INSERT INTO links (id, account_id, client_id, scopes, status, created_at, last_used_at) VALUES (?, ?, ?, ?, 'active', ?, ?)`,
		"link_old", "acct_old", "old-client", `["openid","bookings:read","bookings:write"]`, at, at)
	exec(`INSERT INTO token_sessions (kind, signature_hash, request_id, client_id, account_id, link_id, active, request, expires_at, created_at)
		VALUES ('refresh_token', ?, 'req_old', 'old-client', 'acct_old', 'link_old', ?, ?, ?, ?)`,
		store.HashSecret("refresh-old"), true, []byte(`{"old":true}`), at.Add(90*24*time.Hour), at)
	exec(`INSERT INTO businesses (id, reference, name, category, city, address, time_zone, agent_booking, min_notice_minutes,
		horizon_days, slot_interval_minutes, cancellation_window_minutes, cancellation_fee_cents, currency, cancellation_policy,
		search_text, created_at, updated_at) VALUES (?, ?, ?, 'appointment', 'Brooklyn', '1 Old St', 'America/New_York', ?, 0, 365, 30, 0, 0, 'USD', '', ?, ?, ?)`,
		"biz_old", "biz-old-barber", "Old Barber", true, "old barber brooklyn", at, at)
	exec(`INSERT INTO services (id, business_id, reference, name, duration_minutes, price_cents, currency) VALUES ('svc_old', 'biz_old', 'svc-cut', 'Cut', 30, 3000, 'USD')`)
	exec(`INSERT INTO staff (id, business_id, reference, name) VALUES ('stf_old', 'biz_old', 'stf-ana', 'Ana')`)
	exec(`INSERT INTO staff_services (staff_id, service_id) VALUES ('stf_old', 'svc_old')`)
	for wd := 0; wd < 7; wd++ {
		exec(`INSERT INTO business_hours (business_id, weekday, start_min, end_min) VALUES ('biz_old', ?, 540, 1020)`, wd)
		exec(`INSERT INTO staff_hours (staff_id, weekday, start_min, end_min) VALUES ('stf_old', ?, 540, 1020)`, wd)
	}
	start := time.Date(2026, 3, 3, 15, 0, 0, 0, time.UTC) // 10:00 in New York
	exec(`INSERT INTO bookings (id, reference, business_id, service_id, staff_id, account_id, link_id, starts_at, ends_at,
		block_start, block_end, status, version, notes, price_cents, currency, created_at, updated_at)
		VALUES ('bkg_old', 'OLD1234', 'biz_old', 'svc_old', 'stf_old', 'acct_old', 'link_old', ?, ?, ?, ?, 'confirmed', 1, 'old notes', 3000, 'USD', ?, ?)`,
		start, start.Add(30*time.Minute), start, start.Add(30*time.Minute), at, at)
}

func checkUpgraded(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	ctx := context.Background()
	a, err := s.GetAccountByEmail(ctx, "old@example.com")
	if err != nil || a.ID != "acct_old" {
		t.Fatalf("account after upgrade: %+v, %v", a, err)
	}
	if l, err := s.GetActiveLink(ctx, "acct_old", "old-client"); err != nil || l.ID != "link_old" {
		t.Fatalf("link after upgrade: %+v, %v", l, err)
	}
	ts, err := s.GetTokenSession(ctx, store.KindRefreshToken, store.HashSecret("refresh-old"))
	if err != nil || !ts.Active || ts.LinkID != "link_old" {
		t.Fatalf("refresh token after upgrade: %+v, %v", ts, err)
	}
	cat, err := s.LoadCatalog(ctx, "biz-old-barber")
	if err != nil {
		t.Fatal(err)
	}
	if cat.Business.ContactEmail != "" || len(cat.Staff) != 1 || len(cat.Services) != 1 {
		t.Fatalf("catalog after upgrade: %+v", cat)
	}

	// The booking engine still sees the old booking.
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	svc := booking.NewService(s, func() time.Time { return now })
	av, err := svc.Availability(ctx, booking.AvailabilityQuery{BusinessRef: "biz-old-barber", ServiceRef: "svc-cut", LocalDate: "2026-03-03"})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 3, 3, 15, 0, 0, 0, time.UTC)
	free := 0
	for _, st := range av.Staff {
		for _, sl := range st.Slots {
			free++
			if sl.StartsAt.Equal(old) {
				t.Fatalf("availability offers the old booking's time %s", sl.StartsAt)
			}
		}
	}
	if free == 0 {
		t.Fatal("no availability after upgrade")
	}

	// The no-overlap rule still holds against the old booking.
	clash := store.Booking{ID: "bkg_new", Reference: "NEW1234", BusinessID: "biz_old", ServiceID: "svc_old", StaffID: "stf_old",
		AccountID: "acct_old", LinkID: "link_old", StartsAt: old.Add(15 * time.Minute), EndsAt: old.Add(45 * time.Minute),
		BlockStart: old.Add(15 * time.Minute), BlockEnd: old.Add(45 * time.Minute), Status: store.BookingConfirmed, Version: 1,
		Currency: "USD", CreatedAt: now, UpdatedAt: now}
	if err := s.InsertBooking(ctx, clash); !errors.Is(err, store.ErrOverlap) {
		t.Fatalf("overlapping insert after upgrade: %v, want ErrOverlap", err)
	}
	// The old booking moves and cancels.
	b, err := s.UpdateBooking(ctx, "bkg_old", func(b store.Booking) (store.Booking, error) {
		b.StartsAt, b.EndsAt = b.StartsAt.Add(time.Hour), b.EndsAt.Add(time.Hour)
		b.BlockStart, b.BlockEnd = b.StartsAt, b.EndsAt
		b.Version++
		return b, nil
	})
	if err != nil || b.Version != 2 || b.Notes != "old notes" {
		t.Fatalf("move after upgrade: %+v, %v", b, err)
	}
	if err := s.InsertBooking(ctx, clash); err != nil {
		t.Fatalf("insert into the freed time: %v", err)
	}

	// The new tables work beside the old rows.
	if _, err := s.PutCatalog(ctx, withContact(cat, "desk@oldbarber.example")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetBusiness(ctx, "biz-old-barber"); got.ContactEmail != "desk@oldbarber.example" {
		t.Fatalf("contact_email = %q", got.ContactEmail)
	}
	if err := s.EnqueueMessages(ctx, store.OutboxMessage{ID: "msg_upgrade", Channel: store.ChannelEmail, Topic: "booking.created",
		Recipient: "old@example.com", BookingID: "bkg_old", Payload: []byte(`{}`), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	ms, err := s.LeaseMessages(ctx, "w1", now, time.Minute, 10)
	if err != nil || len(ms) != 1 || ms[0].ID != "msg_upgrade" {
		t.Fatalf("lease after upgrade: %+v, %v", ms, err)
	}
}

func withContact(c store.Catalog, email string) store.Catalog {
	c.Business.ContactEmail = email
	return c
}
