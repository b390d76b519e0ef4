package notify_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	lsmail "github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestDeletedAccountCustomer: a change to a booking whose account was
// erased names the customer "Deleted account" in the business's e-mail
// (subject and text) and in the webhook payload (no address), and writes to
// no one at the erased placeholder address.
func TestDeletedAccountCustomer(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s, "desk@harbor.example")
		if err := s.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: f.cat.Business.ID,
			URL: "https://hooks.harbor.example/linkslot", Events: notify.Events, SecretEncrypted: []byte("sealed"), Enabled: true,
			CreatedAt: f.now, UpdatedAt: f.now}); err != nil {
			t.Fatal(err)
		}
		n, err := notify.New(notify.Options{Issuer: "http://127.0.0.1:8080", Clock: func() time.Time { return f.now }})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC)
		f.change(t, n, "create", start)
		if err := s.EraseAccount(ctx, f.person.ID, f.now); err != nil {
			t.Fatal(err)
		}
		if got := f.change(t, n, "cancel", start); got != (notify.Notified{Person: notify.Off, Business: notify.Queued, Webhooks: 1}) {
			t.Fatalf("notified %+v", got)
		}
		all, err := s.ListMessages(ctx, store.OutboxFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var msgs []store.OutboxMessage
		for _, m := range all {
			if m.Topic == notify.EventCancelled {
				msgs = append(msgs, m)
			}
		}
		if len(msgs) != 2 {
			t.Fatalf("%d messages for the cancellation, want the business's e-mail and one webhook", len(msgs))
		}
		for _, m := range msgs {
			if strings.Contains(string(m.Payload), "erased.invalid") || strings.Contains(m.Recipient, "erased.invalid") ||
				strings.Contains(string(m.Payload), "pat@example.com") {
				t.Errorf("%s message carries the erased or the old address: %s", m.Channel, m.Payload)
			}
			switch m.Channel {
			case store.ChannelEmail:
				var mail lsmail.Message
				if err := json.Unmarshal(m.Payload, &mail); err != nil {
					t.Fatal(err)
				}
				if m.Recipient != "desk@harbor.example" || !strings.HasSuffix(mail.Subject, "(Deleted account)") ||
					!strings.Contains(mail.Text, "Deleted account") || !strings.Contains(mail.HTML, "Deleted account") {
					t.Errorf("business e-mail to %s: %q\n%s", m.Recipient, mail.Subject, mail.Text)
				}
			case store.ChannelWebhook:
				var ev notify.WebhookEvent
				if err := json.Unmarshal(m.Payload, &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Data.Customer != (notify.Customer{Name: store.DeletedAccountLabel}) || ev.Data.Booking.Reference != "LS-7Q2K9" {
					t.Errorf("webhook data %+v", ev.Data)
				}
			}
		}
	})
}
