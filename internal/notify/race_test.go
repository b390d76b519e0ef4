package notify_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/internal/webhook"
)

// TestThreeServersExactlyOnce: three server processes' outbox workers —
// each on its own connection pool to one database, wired as every server
// wires its own (app.NewNotifications) — run while 100 bookings are made
// at once. Every message reaches its receiver exactly once per id: each
// e-mail once at the SMTP server (by Message-ID), each webhook event once at
// the endpoint (by webhook-id), and the database records one delivery
// attempt per message.
func TestThreeServersExactlyOnce(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			raw := sqltest.MustURL(t, backend)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			open := func() *sqlstore.Store {
				s, err := sqlstore.Open(ctx, raw, sqlstore.Options{MaxOpenConns: 4})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			s := open()
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, s, "desk@harbor.example")

			// The business's endpoint, verifying every delivery with the
			// reference library.
			secret := webhook.NewSecret()
			ref, _ := standardwebhooks.NewWebhook(secret)
			var mu sync.Mutex
			hooks := map[string]int{}
			ca := testkit.NewCA(t)
			srv := ca.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if err := ref.Verify(body, r.Header); err != nil {
					t.Errorf("unverifiable delivery: %v", err)
					w.WriteHeader(400)
					return
				}
				mu.Lock()
				hooks[r.Header.Get("webhook-id")]++
				mu.Unlock()
				w.WriteHeader(204)
			}), "localhost", "127.0.0.1")
			key := []byte(strings.Repeat("k", 32))
			sealer, _ := webhook.NewSealer(key)
			ep := store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: f.cat.Business.ID, URL: srv.URL + "/in",
				Events: notify.Events, Enabled: true, CreatedAt: f.now, UpdatedAt: f.now}
			ep.SecretEncrypted = sealer.Seal(ep.ID, secret)
			if err := s.CreateWebhookEndpoint(ctx, ep); err != nil {
				t.Fatal(err)
			}

			smtpd := testkit.NewSMTPServer(t)
			settings, _ := mail.ParseURL(smtpd.URL())
			cfg := config.Config{Issuer: "https://auth.linkslot.test", Resource: "https://mcp.linkslot.test/mcp", SecretKey: key,
				Mail: settings, MailFrom: "Linkslot <no-reply@auth.linkslot.test>"}
			var n *notify.Notifier
			var wg sync.WaitGroup
			for i := 0; i < 3; i++ {
				ns, err := app.NewNotifications(cfg, open(), app.NotificationOptions{
					Webhook: &webhook.Deliverer{Development: true, Client: webhook.NewClient(true, safefetch.DialOptions{RootCAs: ca.Pool()})}})
				if err != nil {
					t.Fatal(err)
				}
				ns.Worker.Poll = 20 * time.Millisecond
				n = ns.Notifier
				wg.Add(1)
				go func() { defer wg.Done(); ns.Worker.Run(ctx) }()
			}

			// 100 bookings at once, each with its notifications in its
			// own transaction.
			const bookings = 100
			var bw sync.WaitGroup
			errs := make(chan error, bookings)
			base := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
			for i := 0; i < bookings; i++ {
				bw.Add(1)
				go func() {
					defer bw.Done()
					start := base.Add(time.Duration(i) * time.Hour)
					errs <- s.InTx(ctx, func(tx store.Store) error {
						b := store.Booking{ID: store.NewID("bkg"), Reference: fmt.Sprintf("LS-R%03d", i), BusinessID: f.cat.Business.ID,
							ServiceID: f.cat.Services[0].ID, StaffID: f.cat.Staff[0].ID, AccountID: f.person.ID, LinkID: "lnk_x",
							StartsAt: start, EndsAt: start.Add(45 * time.Minute), BlockStart: start, BlockEnd: start.Add(45 * time.Minute),
							Status: store.BookingConfirmed, Version: 1, PriceCents: 4500, Currency: "USD", CreatedAt: f.now, UpdatedAt: f.now}
						if err := tx.InsertBooking(ctx, b); err != nil {
							return err
						}
						fc := f.facts("create", start)
						fc.BookingReference = b.Reference
						got, err := n.BookingChanged(ctx, tx, notify.Change{Facts: fc, Booking: b})
						if err == nil && got.Webhooks != 1 {
							err = fmt.Errorf("notified %+v", got)
						}
						return err
					})
				}()
			}
			bw.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			mails := smtpd.WaitFor(t, 2*bookings, 2*time.Minute)
			deadline := time.Now().Add(2 * time.Minute)
			for {
				mu.Lock()
				got := len(hooks)
				mu.Unlock()
				if got >= bookings || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // room for a duplicate to show up
			cancel()
			wg.Wait()

			ids := map[string]int{}
			for _, m := range smtpd.Mails() {
				msg, _ := testkit.ParseMail(t, m.Data)
				ids[msg.Header.Get("Message-Id")]++
			}
			if len(mails) < 2*bookings || len(ids) != 2*bookings {
				t.Fatalf("%d e-mails with %d distinct ids, want %d", len(smtpd.Mails()), len(ids), 2*bookings)
			}
			for id, c := range ids {
				if c != 1 {
					t.Errorf("e-mail %s sent %d times", id, c)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(hooks) != bookings {
				t.Fatalf("%d distinct webhook-ids received, want %d", len(hooks), bookings)
			}
			for id, c := range hooks {
				if c != 1 {
					t.Errorf("webhook %s delivered %d times", id, c)
				}
			}
			var attempts int64
			if err := s.DB().Table("delivery_attempts").Count(&attempts).Error; err != nil {
				t.Fatal(err)
			}
			if attempts != 3*bookings {
				t.Errorf("%d delivery attempts recorded, want one per message (%d)", attempts, 3*bookings)
			}
			var owners []string
			s.DB().Table("delivery_attempts").Distinct("owner").Pluck("owner", &owners)
			t.Logf("%s: %d messages delivered once each by %d workers", backend, 3*bookings, len(owners))
		})
	}
}
