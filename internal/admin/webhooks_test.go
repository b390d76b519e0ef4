package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/webhook"
)

// TestWebhooksCLI drives `authserver webhooks …`: create prints the secret
// once (whsec_ + base64 of 32 bytes), stored sealed; list, disable, enable,
// rotate-secret, deliveries, replay and delete work and are audited; bad
// URLs and events are refused with nothing written.
func TestWebhooksCLI(t *testing.T) {
	ctx := context.Background()
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		sealer, _ := webhook.NewSealer([]byte(strings.Repeat("s", 32)))
		svc, err := admin.New(admin.Config{Store: s, Clock: tickingClock(), Webhooks: sealer})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCatalog(ctx, store.Catalog{Business: store.Business{Reference: "biz-a", Name: "A", Category: store.CategoryAppointment,
			TimeZone: "Europe/Lisbon", Currency: "EUR"}}); err != nil {
			t.Fatal(err)
		}
		out := mustRun(t, svc, "", "webhooks", "create", "--business", "biz-a", "--url", "https://hooks.example/in",
			"--events", "booking.created,booking.cancelled", "--json")
		var created admin.CreatedWebhook
		if err := json.Unmarshal([]byte(out), &created); err != nil {
			t.Fatal(err)
		}
		key, err := webhook.Key(created.Secret)
		if !strings.HasPrefix(created.Secret, "whsec_") || err != nil || len(key) != 32 {
			t.Fatalf("secret %q (%v)", created.Secret, err)
		}
		if strings.Join(created.Events, ",") != "booking.cancelled,booking.created" || created.Business != "biz-a" || !created.Enabled {
			t.Fatalf("created %+v", created)
		}
		ep, _ := s.GetWebhookEndpoint(ctx, created.ID)
		if strings.Contains(string(ep.SecretEncrypted), created.Secret) {
			t.Fatal("secret stored in the clear")
		}
		if got, err := sealer.Open(ep.ID, ep.SecretEncrypted); err != nil || got != created.Secret {
			t.Fatalf("sealed secret opens to %q, %v", got, err)
		}
		list := mustRun(t, svc, "", "webhooks", "list", "--business", "biz-a")
		if !strings.Contains(list, created.ID) || strings.Contains(list, created.Secret) {
			t.Fatalf("list:\n%s", list)
		}
		for _, bad := range [][]string{
			{"--url", "http://hooks.example/in"}, {"--url", "ftp://x"}, {"--url", "https://hooks.example/in", "--events", "booking.exploded"},
		} {
			args := append([]string{"webhooks", "create", "--business", "biz-a"}, bad...)
			if _, err := run(t, svc, "", args...); !errors.Is(err, admin.ErrInvalid) {
				t.Errorf("%v: %v", bad, err)
			}
		}
		// Literal special-use addresses and invalid ports are refused at
		// creation, naming the field and the reason, not at delivery.
		for raw, want := range map[string]string{
			"https://10.0.0.7/in":           "address 10.0.0.7 is in a private range",
			"https://127.0.0.1/in":          "the loopback range",
			"https://169.254.169.254/in":    "the cloud metadata address",
			"https://[::ffff:192.168.1.1]/": "a private range",
			"https://[fd00::1]/in":          "the unique-local range",
			"https://0.0.0.0/in":            "the unspecified range",
			"https://hooks.example:0/in":    "port 0, outside 1–65535",
			"https://hooks.example:99999/":  "port 99999, outside 1–65535",
			"https://hooks.example:/in":     "an empty port",
		} {
			_, err := svc.CreateWebhook(ctx, admin.Actor{}, "biz-a", raw, nil)
			ps, _ := admin.ProblemsOf(err)
			if !errors.Is(err, admin.ErrInvalid) || len(ps) != 1 || ps[0].Path != "url" || !strings.Contains(ps[0].Message, want) {
				t.Errorf("%s: %v %+v, want url refused with %q", raw, err, ps, want)
			}
		}
		if _, err := run(t, svc, "", "webhooks", "create", "--business", "biz-missing", "--url", "https://h.example/x"); !errors.Is(err, admin.ErrNotFound) {
			t.Errorf("unknown business: %v", err)
		}
		if ws, _ := svc.ListWebhooks(ctx, ""); len(ws) != 1 {
			t.Fatalf("refused creates wrote endpoints: %+v", ws)
		}
		upd := mustRun(t, svc, "", "webhooks", "update", created.ID, "--url", "https://hooks.example/v2", "--events", "")
		if ep, _ := s.GetWebhookEndpoint(ctx, created.ID); ep.URL != "https://hooks.example/v2" || len(ep.Events) != len(notify.Events) || strings.Contains(upd, "whsec_") {
			t.Fatalf("update: %+v\n%s", ep, upd)
		}
		if _, err := run(t, svc, "", "webhooks", "update", created.ID, "--url", "http://hooks.example/v3"); !errors.Is(err, admin.ErrInvalid) {
			t.Errorf("update to http: %v", err)
		}
		if _, err := run(t, svc, "", "webhooks", "update", created.ID); err == nil {
			t.Error("update without a change ran")
		}
		mustRun(t, svc, "", "webhooks", "disable", created.ID)
		if ep, _ := s.GetWebhookEndpoint(ctx, created.ID); ep.Enabled {
			t.Fatal("disable did not disable")
		}
		mustRun(t, svc, "", "webhooks", "enable", created.ID)
		rot := mustRun(t, svc, "", "webhooks", "rotate-secret", created.ID)
		if !strings.Contains(rot, "whsec_") || strings.Contains(rot, created.Secret) {
			t.Fatalf("rotate-secret:\n%s", rot)
		}

		// A failed delivery shows in the log and is replayed with its id.
		if err := s.EnqueueMessages(ctx, store.OutboxMessage{ID: "msg_hook1", Channel: store.ChannelWebhook, Topic: "booking.created",
			EndpointID: created.ID, Payload: []byte(`{}`), CreatedAt: fixedNow}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LeaseMessages(ctx, "w", fixedNow, time.Minute, 10); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishAttempt(ctx, "w", store.DeliveryAttempt{MessageID: "msg_hook1", Attempt: 1, StatusCode: 503, Error: "the endpoint answered 503", At: fixedNow}, fixedNow.Add(0)); err != nil {
			t.Fatal(err)
		}
		dl := mustRun(t, svc, "", "webhooks", "deliveries", created.ID)
		if !strings.Contains(dl, "msg_hook1") || !strings.Contains(dl, "HTTP 503") {
			t.Fatalf("deliveries:\n%s", dl)
		}
		mustRun(t, svc, "", "webhooks", "replay", "msg_hook1")
		if _, err := run(t, svc, "", "webhooks", "replay", "msg_nope"); !errors.Is(err, admin.ErrNotFound) {
			t.Errorf("replay of an unknown delivery: %v", err)
		}
		mustRun(t, svc, "", "webhooks", "delete", created.ID)
		if _, err := s.GetWebhookEndpoint(ctx, created.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("delete did not delete")
		}
		var actions []string
		for _, e := range auditOf(t, s) {
			if strings.HasPrefix(e.Action, "webhook.") || strings.HasPrefix(e.Action, "delivery.") {
				actions = append(actions, e.Action)
				if strings.Contains(string(e.After)+string(e.Before), "whsec_") {
					t.Errorf("audit %s holds a secret", e.Action)
				}
			}
		}
		want := "webhook.create webhook.update webhook.disable webhook.enable webhook.rotate_secret delivery.replay webhook.delete"
		if strings.Join(actions, " ") != want {
			t.Fatalf("audit %v, want %s", actions, want)
		}
	})
}

// TestFeedURLCLI: `authserver catalog feed-url` prints the same URL each
// time, a staff member's on request, and a new one with --new.
func TestFeedURLCLI(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	f, err := feed.New(s, []byte(strings.Repeat("s", 32)), "https://auth.linkslot.test", nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := admin.New(admin.Config{Store: s, Clock: tickingClock(), Feeds: f})
	if _, err := s.PutCatalog(ctx, store.Catalog{Business: store.Business{Reference: "biz-a", Name: "A", Category: store.CategoryAppointment,
		TimeZone: "Europe/Lisbon", Currency: "EUR"}, Staff: []store.Staff{{Reference: "ana", Name: "Ana"}}}); err != nil {
		t.Fatal(err)
	}
	one := strings.TrimSpace(mustRun(t, svc, "", "catalog", "feed-url", "--business", "biz-a"))
	if !strings.HasPrefix(one, "https://auth.linkslot.test/calendar/") || !strings.HasSuffix(one, ".ics") {
		t.Fatalf("feed-url printed %q", one)
	}
	if again := strings.TrimSpace(mustRun(t, svc, "", "catalog", "feed-url", "--business", "biz-a")); again != one {
		t.Fatalf("second feed-url %q, want %q", again, one)
	}
	staff := strings.TrimSpace(mustRun(t, svc, "", "catalog", "feed-url", "--business", "biz-a", "--staff", "ana"))
	fresh := strings.TrimSpace(mustRun(t, svc, "", "catalog", "feed-url", "--business", "biz-a", "--new"))
	if staff == one || fresh == one || fresh == staff {
		t.Fatalf("urls %q %q %q", one, staff, fresh)
	}
	if _, err := f.Render(ctx, one[strings.LastIndex(one, "/")+1:]); !errors.Is(err, feed.ErrNotFound) {
		t.Fatalf("the replaced URL still renders: %v", err)
	}
	if _, err := run(t, svc, "", "catalog", "feed-url", "--business", "biz-none"); !errors.Is(err, admin.ErrNotFound) {
		t.Fatalf("unknown business: %v", err)
	}
	if _, err := run(t, svc, "", "catalog", "feed-url"); err == nil {
		t.Fatal("feed-url without --business ran")
	}
}
