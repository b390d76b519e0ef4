package notify_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	goical "github.com/emersion/go-ical"

	lsmail "github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// sent records what the workers delivered.
type sent struct {
	mu    sync.Mutex
	mails []lsmail.Message
	hooks []store.OutboxMessage
}

func (r *sent) Send(_ context.Context, m lsmail.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mails = append(r.mails, m)
	return nil
}

func (r *sent) reminders() (mails, hooks int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.mails {
		if strings.HasPrefix(m.Subject, "Reminder:") {
			mails++
		}
	}
	for _, h := range r.hooks {
		if h.Topic == notify.EventReminder {
			hooks++
		}
	}
	return
}

// TestRemindersSentOnce: a booking's reminders (24 h and 2 h before, the
// default) are an e-mail and a booking.reminder webhook each, delivered
// exactly once by two worker processes at their time on an injected clock,
// not sent for the version a reschedule replaced (the new time's are), nor
// after a cancellation; a worker started later (a restart) sends nothing
// again. The invitation carries matching VALARMs, read back with go-ical.
func TestRemindersSentOnce(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s, "")
		clock := testkit.NewClock(f.now)
		n, err := notify.New(notify.Options{Issuer: "https://auth.linkslot.test", Clock: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		ep := store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: f.cat.Business.ID, URL: "https://hooks.example/x",
			Events: notify.Events, SecretEncrypted: []byte("x"), Enabled: true, CreatedAt: f.now, UpdatedAt: f.now}
		if err := s.CreateWebhookEndpoint(ctx, ep); err != nil {
			t.Fatal(err)
		}
		rec := &sent{}
		hooks := outbox.DeliverFunc(func(_ context.Context, m store.OutboxMessage) outbox.Result {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.hooks = append(rec.hooks, m)
			return outbox.Result{OK: true, StatusCode: 200}
		})
		worker := func(owner string) *outbox.Worker {
			return &outbox.Worker{Store: s, Owner: owner, Clock: clock.Now, Channels: map[string]outbox.Deliverer{
				store.ChannelEmail:   notify.CheckReminders(s, notify.MailDeliverer(rec)),
				store.ChannelWebhook: notify.CheckReminders(s, hooks)}}
		}
		a, b := worker("process-a"), worker("process-b")
		both := func() {
			t.Helper()
			var wg sync.WaitGroup
			for _, w := range []*outbox.Worker{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						n, err := w.RunOnce(ctx)
						if err != nil {
							t.Error(err)
						}
						if n == 0 {
							return
						}
					}
				}()
			}
			wg.Wait()
		}
		expect := func(when string, mails, hooks int) {
			t.Helper()
			if m, h := rec.reminders(); m != mails || h != hooks {
				t.Fatalf("%s: %d reminder e-mails and %d webhooks, want %d and %d", when, m, h, mails, hooks)
			}
		}

		start := time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC)
		f.change(t, n, "create", start)
		both()
		expect("at booking", 0, 0)
		// The invitation's alarms are the reminders' times.
		rec.mu.Lock()
		inv := rec.mails[0].Calendar
		rec.mu.Unlock()
		cal, err := goical.NewDecoder(strings.NewReader(inv)).Decode()
		if err != nil {
			t.Fatal(err)
		}
		var triggers []string
		for _, c := range cal.Events()[0].Children {
			if c.Name == goical.CompAlarm {
				triggers = append(triggers, c.Props.Get(goical.PropTrigger).Value)
			}
		}
		if strings.Join(triggers, ",") != "-PT24H,-PT2H" {
			t.Fatalf("VALARM triggers %v", triggers)
		}

		clock.Set(start.Add(-24*time.Hour - time.Minute))
		both()
		expect("a minute before the first reminder", 0, 0)
		clock.Set(start.Add(-24 * time.Hour))
		both()
		both()
		expect("24 hours before", 1, 1)
		rec.mu.Lock()
		var text string
		for _, m := range rec.mails {
			if strings.HasPrefix(m.Subject, "Reminder:") {
				text = m.Text
			}
		}
		rec.mu.Unlock()
		if !strings.Contains(text, "your appointment is in 24 hours") || !strings.Contains(text, "LS-7Q2K9") {
			t.Fatalf("reminder text:\n%s", text)
		}

		// Moved a day later: the 2-hour reminder of the old time is not
		// sent; the new time's are.
		moved := start.Add(24 * time.Hour)
		f.change(t, n, "reschedule", moved)
		clock.Set(start.Add(-2 * time.Hour))
		both()
		expect("the old time's 2 hours", 1, 1)
		clock.Set(moved.Add(-24 * time.Hour))
		both()
		expect("the new time's 24 hours", 2, 2)

		// Cancelled: nothing more.
		f.change(t, n, "cancel", moved)
		clock.Set(moved.Add(-2 * time.Hour))
		both()
		expect("after the cancellation", 2, 2)
		// A process started afresh finds nothing left to send.
		if n, err := worker("process-c").RunOnce(ctx); err != nil || n != 0 {
			t.Fatalf("a restarted worker leased %d, %v", n, err)
		}
		expect("after a restart", 2, 2)
	})
}

// TestRemindersOff: a business that turned reminders off gets none, and
// its invitations carry no VALARM.
func TestRemindersOff(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s, "")
		if err := s.SetReminderOffsets(ctx, f.cat.Business.ID, nil, f.now); err != nil {
			t.Fatal(err)
		}
		n, _ := notify.New(notify.Options{Issuer: "https://auth.linkslot.test", Clock: func() time.Time { return f.now }})
		f.change(t, n, "create", time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC))
		ms, err := s.ListMessages(ctx, store.OutboxFilter{})
		if err != nil || len(ms) != 1 || ms[0].Topic != notify.EventCreated {
			t.Fatalf("messages %d, %v", len(ms), err)
		}
		if strings.Contains(string(ms[0].Payload), "VALARM") {
			t.Fatal("an invitation with an alarm while reminders are off")
		}
	})
}
