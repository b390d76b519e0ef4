package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

func outboxMsg(id string, created time.Time) store.OutboxMessage {
	return store.OutboxMessage{ID: id, Channel: store.ChannelEmail, Topic: "booking.created", Recipient: "p@example.com",
		Payload: []byte(`{"subject":"x"}`), CreatedAt: created}
}

func testOutbox(t *testing.T, s store.Store) {
	now := store.UTC(t0)
	must(t, s.EnqueueMessages(ctx, outboxMsg("msg_a", now), outboxMsg("msg_b", now.Add(time.Second))))
	future := outboxMsg("msg_later", now)
	future.NextAttemptAt = now.Add(time.Hour)
	must(t, s.EnqueueMessages(ctx, future))
	wantErr(t, s.EnqueueMessages(ctx, outboxMsg("msg_a", now)), store.ErrAlreadyExists)

	// Only due messages are leased, and a held lease is not leased again.
	got, err := s.LeaseMessages(ctx, "w1", now.Add(2*time.Second), time.Minute, 10)
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("leased %d messages, want the 2 due ones", len(got))
	}
	for _, m := range got {
		if m.Attempts != 1 || m.LeaseOwner != "w1" || m.LeaseUntil == nil || m.Status != store.OutboxQueued {
			t.Fatalf("leased message %+v", m)
		}
	}
	again, err := s.LeaseMessages(ctx, "w2", now.Add(3*time.Second), time.Minute, 10)
	must(t, err)
	if len(again) != 0 {
		t.Fatalf("a held lease was leased again: %+v", again)
	}

	// Delivered: the outcome sticks and the attempt is logged.
	a := store.DeliveryAttempt{MessageID: "msg_a", Attempt: 1, OK: true, StatusCode: 204, Duration: 15 * time.Millisecond, At: now.Add(3 * time.Second)}
	must(t, s.FinishAttempt(ctx, "w1", a, time.Time{}))
	m, err := s.GetMessage(ctx, "msg_a")
	must(t, err)
	if m.Status != store.OutboxDelivered || m.DeliveredAt == nil || m.LeaseOwner != "" {
		t.Fatalf("delivered message %+v", m)
	}
	// The same attempt cannot be finished twice.
	wantErr(t, s.FinishAttempt(ctx, "w1", store.DeliveryAttempt{MessageID: "msg_a", Attempt: 1, At: now}, time.Time{}), store.ErrAlreadyExists)

	// Retried: queued again at retryAt, and leased again only then.
	retryAt := now.Add(30 * time.Second)
	must(t, s.FinishAttempt(ctx, "w1", store.DeliveryAttempt{MessageID: "msg_b", Attempt: 1, StatusCode: 503, Error: "503", At: now.Add(3 * time.Second)}, retryAt))
	if got, _ := s.LeaseMessages(ctx, "w2", retryAt.Add(-time.Second), time.Minute, 10); len(got) != 0 {
		t.Fatalf("leased before its retry time: %+v", got)
	}
	got, err = s.LeaseMessages(ctx, "w2", retryAt, time.Minute, 10)
	must(t, err)
	if len(got) != 1 || got[0].ID != "msg_b" || got[0].Attempts != 2 || got[0].LastError != "503" {
		t.Fatalf("retry lease: %+v", got)
	}
	// An expired lease is taken over; the old holder's finish then loses.
	got, err = s.LeaseMessages(ctx, "w3", retryAt.Add(2*time.Minute), time.Minute, 10)
	must(t, err)
	if len(got) != 1 || got[0].Attempts != 3 {
		t.Fatalf("takeover of an expired lease: %+v", got)
	}
	wantErr(t, s.FinishAttempt(ctx, "w2", store.DeliveryAttempt{MessageID: "msg_b", Attempt: 2, OK: true, At: retryAt}, time.Time{}), store.ErrConflict)
	// Failed for good.
	must(t, s.FinishAttempt(ctx, "w3", store.DeliveryAttempt{MessageID: "msg_b", Attempt: 3, Error: "gave up", At: retryAt.Add(2 * time.Minute)}, time.Time{}))
	m, err = s.GetMessage(ctx, "msg_b")
	must(t, err)
	if m.Status != store.OutboxFailed || m.LastError != "gave up" {
		t.Fatalf("failed message %+v", m)
	}
	atts, err := s.ListAttempts(ctx, "msg_b")
	must(t, err)
	if len(atts) != 3 || atts[0].Attempt != 1 || atts[0].StatusCode != 503 || !atts[1].OK || atts[2].Error != "gave up" {
		t.Fatalf("attempts %+v", atts)
	}
	// Several messages in one read: by message, then attempt.
	several, err := s.ListAttempts(ctx, "msg_b", "msg_none", "msg_a")
	must(t, err)
	var ids []string
	for _, a := range several {
		ids = append(ids, fmt.Sprintf("%s/%d", a.MessageID, a.Attempt))
	}
	if strings.Join(ids, " ") != "msg_a/1 msg_b/1 msg_b/2 msg_b/3" {
		t.Fatalf("ListAttempts of three messages = %v", ids)
	}
	if none, err := s.ListAttempts(ctx); err != nil || len(none) != 0 {
		t.Fatalf("ListAttempts of no message = %v, %v", none, err)
	}
	failed, err := s.ListMessages(ctx, store.OutboxFilter{Status: store.OutboxFailed})
	must(t, err)
	if len(failed) != 1 || failed[0].ID != "msg_b" {
		t.Fatalf("failed list %+v", failed)
	}

	// Replay keeps the id and queues it at once.
	r, err := s.ReplayMessage(ctx, "msg_b", retryAt.Add(time.Hour))
	must(t, err)
	if r.ID != "msg_b" || r.Status != store.OutboxQueued || !r.NextAttemptAt.Equal(retryAt.Add(time.Hour)) {
		t.Fatalf("replayed %+v", r)
	}
	_, err = s.ReplayMessage(ctx, "msg_missing", now)
	wantErr(t, err, store.ErrNotFound)
	// A delivered message, and one whose lease is held, are not replayed:
	// either would go out twice.
	_, err = s.ReplayMessage(ctx, "msg_a", retryAt.Add(time.Hour))
	wantErr(t, err, store.ErrConflict)
	held, err := s.LeaseMessages(ctx, "w4", now.Add(time.Hour), time.Minute, 10)
	must(t, err)
	if len(held) != 1 || held[0].ID != "msg_later" {
		t.Fatalf("leased %+v", held)
	}
	_, err = s.ReplayMessage(ctx, "msg_later", now.Add(time.Hour+time.Second))
	wantErr(t, err, store.ErrConflict)
	if m, _ := s.GetMessage(ctx, "msg_later"); m.LeaseOwner != "w4" {
		t.Fatalf("a refused replay released the lease: %+v", m)
	}
	// Once the lease has expired the message can be replayed.
	_, err = s.ReplayMessage(ctx, "msg_later", now.Add(time.Hour+2*time.Minute))
	must(t, err)
	counts, err := s.CountUndelivered(ctx)
	must(t, err)
	byStatus := map[string]int64{}
	for _, c := range counts {
		byStatus[c.Channel+"/"+c.Status] = c.N
	}
	if byStatus["email/queued"] != 2 || len(byStatus) != 1 { // the delivered one is not counted
		t.Fatalf("counts %v", byStatus)
	}

	// A message written in a rolled-back transaction does not exist.
	boom := errors.New("boom")
	err = s.InTx(ctx, func(tx store.Store) error {
		must(t, tx.EnqueueMessages(ctx, outboxMsg("msg_rolled_back", now)))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx: %v", err)
	}
	_, err = s.GetMessage(ctx, "msg_rolled_back")
	wantErr(t, err, store.ErrNotFound)
}

// testOutboxConcurrent: workers leasing at once never share a message.
func testOutboxConcurrent(t *testing.T, s store.Store) {
	now := store.UTC(t0)
	const n = 60
	var ms []store.OutboxMessage
	for i := range n {
		ms = append(ms, outboxMsg(fmt.Sprintf("msg_%03d", i), now))
	}
	must(t, s.EnqueueMessages(ctx, ms...))
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", w)
			for {
				got, err := s.LeaseMessages(ctx, owner, now, time.Minute, 4)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, m := range got {
					if prev, dup := seen[m.ID]; dup {
						t.Errorf("%s leased by %s and %s", m.ID, prev, owner)
					}
					seen[m.ID] = owner
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("leased %d of %d messages", len(seen), n)
	}
}

func testWebhookEndpoints(t *testing.T, s store.Store) {
	c := putSample(t, s)
	e := store.WebhookEndpoint{ID: "whe_1", BusinessID: c.Business.ID, URL: "https://hooks.example/in",
		Events: []string{"booking.created", "booking.cancelled"}, SecretEncrypted: []byte{1, 2, 3}, Enabled: true, CreatedAt: t0, UpdatedAt: t0}
	must(t, s.CreateWebhookEndpoint(ctx, e))
	wantErr(t, s.CreateWebhookEndpoint(ctx, e), store.ErrAlreadyExists)
	got, err := s.GetWebhookEndpoint(ctx, "whe_1")
	must(t, err)
	if got.URL != e.URL || len(got.Events) != 2 || got.Events[1] != "booking.cancelled" || string(got.SecretEncrypted) != "\x01\x02\x03" || !got.Enabled {
		t.Fatalf("endpoint %+v", got)
	}
	up, err := s.UpdateWebhookEndpoint(ctx, "whe_1", func(e store.WebhookEndpoint) (store.WebhookEndpoint, error) {
		e.Enabled = false
		return e, nil
	})
	must(t, err)
	if up.Enabled || up.BusinessID != c.Business.ID {
		t.Fatalf("updated %+v", up)
	}
	l, err := s.ListWebhookEndpoints(ctx, c.Business.ID)
	must(t, err)
	if len(l) != 1 {
		t.Fatalf("list %+v", l)
	}
	if l, _ := s.ListWebhookEndpoints(ctx, "biz_other"); len(l) != 0 {
		t.Fatalf("another business's list %+v", l)
	}
	// Deleting the endpoint deletes its messages.
	m := outboxMsg("msg_hook", t0)
	m.Channel, m.EndpointID = store.ChannelWebhook, "whe_1"
	must(t, s.EnqueueMessages(ctx, m))
	must(t, s.DeleteWebhookEndpoint(ctx, "whe_1"))
	wantErr(t, s.DeleteWebhookEndpoint(ctx, "whe_1"), store.ErrNotFound)
	_, err = s.GetMessage(ctx, "msg_hook")
	wantErr(t, err, store.ErrNotFound)
}

func testCalendarFeeds(t *testing.T, s store.Store) {
	c := putSample(t, s)
	a := newAccount(t, s, "feed@example.com")
	must(t, s.CreateCalendarFeed(ctx, store.CalendarFeed{ID: "cf_a1", Kind: store.FeedAccount, AccountID: a.ID, CreatedAt: t0}))
	must(t, s.CreateCalendarFeed(ctx, store.CalendarFeed{ID: "cf_b1", Kind: store.FeedBusiness, BusinessID: c.Business.ID, CreatedAt: t0}))
	ana := staffByRef(c, "ana")
	must(t, s.CreateCalendarFeed(ctx, store.CalendarFeed{ID: "cf_s1", Kind: store.FeedStaff, BusinessID: c.Business.ID, StaffID: ana.ID, CreatedAt: t0}))
	for _, q := range []struct{ kind, owner, staff, want string }{
		{store.FeedAccount, a.ID, "", "cf_a1"}, {store.FeedBusiness, c.Business.ID, "", "cf_b1"}, {store.FeedStaff, c.Business.ID, ana.ID, "cf_s1"},
	} {
		f, err := s.ActiveCalendarFeed(ctx, q.kind, q.owner, q.staff)
		must(t, err)
		if f.ID != q.want {
			t.Fatalf("active %s feed = %s, want %s", q.kind, f.ID, q.want)
		}
	}
	must(t, s.RevokeCalendarFeeds(ctx, store.FeedAccount, a.ID, "", t0))
	_, err := s.ActiveCalendarFeed(ctx, store.FeedAccount, a.ID, "")
	wantErr(t, err, store.ErrNotFound)
	f, err := s.GetCalendarFeed(ctx, "cf_a1")
	must(t, err)
	if f.RevokedAt == nil {
		t.Fatal("revoked feed has no revoked_at")
	}
	if f, err := s.ActiveCalendarFeed(ctx, store.FeedBusiness, c.Business.ID, ""); err != nil || f.ID != "cf_b1" {
		t.Fatalf("business feed after the account's revocation: %+v %v", f, err)
	}

	b1 := newBooking(c, "ana", "cut", at(10, 0), store.BookingConfirmed)
	b1.AccountID = a.ID
	b2 := newBooking(c, "ben", "cut", at(34, 0), store.BookingCancelled)
	old := newBooking(c, "ana", "cut", at(-24*40, 0), store.BookingConfirmed)
	for _, b := range []store.Booking{b1, b2, old} {
		must(t, s.InsertBooking(ctx, b))
	}
	since := at(-24*30, 0)
	for _, q := range []struct {
		name string
		f    store.FeedBookingFilter
		want []string
	}{
		{"account", store.FeedBookingFilter{AccountID: a.ID, Since: since}, []string{b1.ID}},
		{"business", store.FeedBookingFilter{BusinessID: c.Business.ID, Since: since}, []string{b1.ID, b2.ID}},
		{"staff", store.FeedBookingFilter{BusinessID: c.Business.ID, StaffID: ana.ID, Since: since}, []string{b1.ID}},
	} {
		got, err := s.ListFeedBookings(ctx, q.f)
		must(t, err)
		var ids []string
		for _, b := range got {
			ids = append(ids, b.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(q.want) {
			t.Fatalf("%s feed bookings %v, want %v", q.name, ids, q.want)
		}
	}
}
