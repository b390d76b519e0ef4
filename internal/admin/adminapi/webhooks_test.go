package adminapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/webhook"
)

// TestAPIWebhooks drives every /admin/api/webhooks route on both backends:
// create (the secret shown once, stored sealed), list, show, update,
// disable, enable, rotate-secret, the delivery log, the failed list,
// replay and delete, each audited without a secret, and every refusal
// with nothing changed.
func TestAPIWebhooks(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		sealer, err := webhook.NewSealer([]byte(strings.Repeat("k", 32)))
		if err != nil {
			t.Fatal(err)
		}
		e := newEnvWith(t, s, adminapi.NewTokenAuth(adminToken), func(c *admin.Config) { c.Webhooks = sealer })
		tok := withToken(adminToken)
		if _, err := s.PutCatalog(ctx, store.Catalog{Business: store.Business{Reference: "biz-a", Name: "A",
			Category: store.CategoryAppointment, TimeZone: "Europe/Lisbon", Currency: "EUR"}}); err != nil {
			t.Fatal(err)
		}

		// Create: the secret once, whsec_ + base64 of 32 bytes, sealed at rest.
		code, m, raw := e.do("POST", "/admin/api/webhooks", "application/json",
			`{"business":"biz-a","url":"https://hooks.example/in","events":["booking.created","booking.cancelled"]}`, tok)
		secret, _ := m["secret"].(string)
		wh, _ := m["webhook"].(map[string]any)
		id, _ := wh["id"].(string)
		if key, err := webhook.Key(secret); code != http.StatusCreated || err != nil || len(key) != 32 || id == "" {
			t.Fatalf("create: %d %s", code, raw)
		}
		if wh["business"] != "biz-a" || wh["enabled"] != true || join(wh["events"]) != "booking.cancelled,booking.created" {
			t.Fatalf("created %v", wh)
		}
		ep, err := s.GetWebhookEndpoint(ctx, id)
		if err != nil || strings.Contains(string(ep.SecretEncrypted), secret) {
			t.Fatalf("stored endpoint %v (secret in the clear?)", err)
		}
		if got, err := sealer.Open(id, ep.SecretEncrypted); err != nil || got != secret {
			t.Fatalf("the sealed secret opens to a different one (%v)", err)
		}

		// Refusals, with nothing written or changed.
		for _, tc := range []struct {
			name, method, path, body string
			status                   int
			code, want               string
		}{
			{"http URL in production", "POST", "/admin/api/webhooks", `{"business":"biz-a","url":"http://hooks.example/in"}`, 400, "invalid_request", "url: must be an https URL"},
			{"loopback in production", "POST", "/admin/api/webhooks", `{"business":"biz-a","url":"http://127.0.0.1:9/in"}`, 400, "invalid_request", "url: "},
			{"not a URL", "POST", "/admin/api/webhooks", `{"business":"biz-a","url":"ftp://x"}`, 400, "invalid_request", "url: "},
			{"no URL", "POST", "/admin/api/webhooks", `{"business":"biz-a"}`, 400, "invalid_request", "url: the endpoint URL is required"},
			{"unknown event", "POST", "/admin/api/webhooks", `{"business":"biz-a","url":"https://h.example/x","events":["booking.exploded"]}`, 400, "invalid_request", `events: unknown event "booking.exploded"`},
			{"no business", "POST", "/admin/api/webhooks", `{"url":"https://h.example/x"}`, 400, "invalid_request", "business: "},
			{"unknown business", "POST", "/admin/api/webhooks", `{"business":"biz-none","url":"https://h.example/x"}`, 404, "not_found", ""},
			{"unknown field", "POST", "/admin/api/webhooks", `{"business":"biz-a","url":"https://h.example/x","secret":"whsec_x"}`, 400, "invalid_json", ""},
			{"list unknown business", "GET", "/admin/api/webhooks?business=biz-none", "", 404, "not_found", ""},
			{"show unknown", "GET", "/admin/api/webhooks/whe_none", "", 404, "not_found", ""},
			{"patch bad URL", "PATCH", "/admin/api/webhooks/" + id, `{"url":"http://hooks.example/in"}`, 400, "invalid_request", "url: "},
			{"patch unknown event", "PATCH", "/admin/api/webhooks/" + id, `{"events":["booking.paid"]}`, 400, "invalid_request", "events: "},
			{"patch enabled", "PATCH", "/admin/api/webhooks/" + id, `{"enabled":false}`, 400, "invalid_request", "enabled: "},
			{"patch unknown", "PATCH", "/admin/api/webhooks/whe_none", `{"url":"https://h.example/x"}`, 404, "not_found", ""},
			{"disable unknown", "POST", "/admin/api/webhooks/whe_none/disable", "", 404, "not_found", ""},
			{"enable unknown", "POST", "/admin/api/webhooks/whe_none/enable", "", 404, "not_found", ""},
			{"rotate unknown", "POST", "/admin/api/webhooks/whe_none/rotate-secret", "", 404, "not_found", ""},
			{"deliveries of unknown", "GET", "/admin/api/webhooks/whe_none/deliveries", "", 404, "not_found", ""},
			{"deliveries bad limit", "GET", "/admin/api/webhooks/" + id + "/deliveries?limit=0", "", 400, "invalid_request", "limit: "},
			{"failed list bad status", "GET", "/admin/api/webhooks/deliveries?status=lost", "", 400, "invalid_request", "status: "},
			{"failed list bad channel", "GET", "/admin/api/webhooks/deliveries?channel=sms", "", 400, "invalid_request", "channel: "},
			{"replay unknown", "POST", "/admin/api/webhooks/deliveries/msg_none/replay", "", 404, "not_found", ""},
			{"delete unknown", "DELETE", "/admin/api/webhooks/whe_none", "", 404, "not_found", ""},
			{"wrong method", "PUT", "/admin/api/webhooks/" + id, "{}", 405, "method_not_allowed", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctype := ""
				if tc.body != "" {
					ctype = "application/json"
				}
				code, m, raw := e.do(tc.method, tc.path, ctype, tc.body, tok)
				if code != tc.status || errCode(m) != tc.code || !strings.Contains(strings.Join(problemPaths(m), "\n"), tc.want) {
					t.Errorf("%d %s", code, raw)
				}
			})
		}
		if eps, _ := s.ListWebhookEndpoints(ctx, ""); len(eps) != 1 || eps[0].URL != "https://hooks.example/in" || len(eps[0].Events) != 2 || !eps[0].Enabled {
			t.Fatalf("refused requests changed the endpoints: %+v", eps)
		}

		// List (all, by business) and show: never the secret.
		for _, path := range []string{"/admin/api/webhooks", "/admin/api/webhooks?business=biz-a"} {
			code, m, raw = e.do("GET", path, "", "", tok)
			if l, _ := m["webhooks"].([]any); code != 200 || len(l) != 1 || strings.Contains(raw, secret) || strings.Contains(raw, "whsec_") {
				t.Fatalf("list %s: %d %s", path, code, raw)
			}
		}
		code, m, raw = e.do("GET", "/admin/api/webhooks/"+id, "", "", tok)
		if wh, _ := m["webhook"].(map[string]any); code != 200 || wh["url"] != "https://hooks.example/in" || strings.Contains(raw, "whsec_") {
			t.Fatalf("show: %d %s", code, raw)
		}

		// Update the URL and the events (empty: all of them).
		code, m, raw = e.do("PATCH", "/admin/api/webhooks/"+id, "application/json", `{"url":"https://hooks.example/v2","events":[]}`, tok)
		if wh, _ := m["webhook"].(map[string]any); code != 200 || wh["url"] != "https://hooks.example/v2" ||
			join(wh["events"]) != "booking.cancelled,booking.completed,booking.confirmed,booking.created,booking.declined,booking.no_show,booking.pending,booking.reminder,booking.rescheduled,callback.requested,waitlist.offered" {
			t.Fatalf("update: %d %s", code, raw)
		}
		if ep, _ := s.GetWebhookEndpoint(ctx, id); ep.URL != "https://hooks.example/v2" || len(ep.Events) != len(notify.Events) {
			t.Fatalf("stored after update: %+v", ep)
		}

		// Disable, enable.
		code, m, _ = e.do("POST", "/admin/api/webhooks/"+id+"/disable", "", "", tok)
		if ep, _ := s.GetWebhookEndpoint(ctx, id); code != 200 || ep.Enabled || m["webhook"].(map[string]any)["enabled"] != false {
			t.Fatalf("disable: %d %v", code, m)
		}
		code, m, _ = e.do("POST", "/admin/api/webhooks/"+id+"/enable", "", "", tok)
		if ep, _ := s.GetWebhookEndpoint(ctx, id); code != 200 || !ep.Enabled {
			t.Fatalf("enable: %d %v", code, m)
		}

		// Rotate: a new secret, shown once; the old one no longer opens.
		code, m, raw = e.do("POST", "/admin/api/webhooks/"+id+"/rotate-secret", "", "", tok)
		secret2, _ := m["secret"].(string)
		ep, _ = s.GetWebhookEndpoint(ctx, id)
		if got, _ := sealer.Open(id, ep.SecretEncrypted); code != 200 || !strings.HasPrefix(secret2, "whsec_") || secret2 == secret || got != secret2 {
			t.Fatalf("rotate: %d %s", code, raw)
		}

		// The delivery log: a failed delivery with its attempt.
		at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		if err := s.EnqueueMessages(ctx, store.OutboxMessage{ID: "msg_hook1", Channel: store.ChannelWebhook, Topic: "booking.created",
			EndpointID: id, BusinessID: ep.BusinessID, Payload: []byte(`{}`), CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.LeaseMessages(ctx, "w1", at, time.Minute, 10); err != nil || len(got) != 1 {
			t.Fatalf("lease: %v %v", got, err)
		}
		if err := s.FinishAttempt(ctx, "w1", store.DeliveryAttempt{MessageID: "msg_hook1", Attempt: 1, StatusCode: 503,
			Error: "the endpoint answered 503", Duration: 20 * time.Millisecond, At: at}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		code, m, raw = e.do("GET", "/admin/api/webhooks/"+id+"/deliveries", "", "", tok)
		ds, _ := m["deliveries"].([]any)
		if code != 200 || len(ds) != 1 {
			t.Fatalf("deliveries: %d %s", code, raw)
		}
		d := ds[0].(map[string]any)
		log, _ := d["log"].([]any)
		if d["id"] != "msg_hook1" || d["status"] != "failed" || d["attempts"] != float64(1) || len(log) != 1 ||
			log[0].(map[string]any)["status_code"] != float64(503) || log[0].(map[string]any)["ok"] != false {
			t.Fatalf("delivery %v", d)
		}
		code, m, raw = e.do("GET", "/admin/api/webhooks/deliveries?status=failed&channel=webhook", "", "", tok)
		if ds, _ := m["deliveries"].([]any); code != 200 || len(ds) != 1 || ds[0].(map[string]any)["id"] != "msg_hook1" {
			t.Fatalf("failed list: %d %s", code, raw)
		}

		// Replay: queued again now with the same id (its webhook-id).
		code, m, raw = e.do("POST", "/admin/api/webhooks/deliveries/msg_hook1/replay", "", "", tok)
		if d, _ := m["delivery"].(map[string]any); code != 200 || d["id"] != "msg_hook1" || d["status"] != "queued" {
			t.Fatalf("replay: %d %s", code, raw)
		}
		// While a worker holds it, and once delivered, a replay would send
		// it twice: refused.
		if got, err := s.LeaseMessages(ctx, "w2", at.Add(time.Hour), time.Hour, 10); err != nil || len(got) != 1 {
			t.Fatalf("lease after replay: %v %v", got, err)
		}
		if code, m, raw := e.do("POST", "/admin/api/webhooks/deliveries/msg_hook1/replay", "", "", tok); code != 409 || errCode(m) != "conflict" ||
			!strings.Contains(raw, "being delivered") {
			t.Fatalf("replay while leased: %d %s", code, raw)
		}
		if err := s.FinishAttempt(ctx, "w2", store.DeliveryAttempt{MessageID: "msg_hook1", Attempt: 2, OK: true, StatusCode: 204, At: at.Add(time.Hour)}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if code, m, raw := e.do("POST", "/admin/api/webhooks/deliveries/msg_hook1/replay", "", "", tok); code != 409 || errCode(m) != "conflict" ||
			!strings.Contains(raw, "delivered already") {
			t.Fatalf("replay of a delivered message: %d %s", code, raw)
		}
		if m, _ := s.GetMessage(ctx, "msg_hook1"); m.Status != store.OutboxDelivered || m.Attempts != 2 {
			t.Fatalf("refused replays changed the message: %+v", m)
		}

		// Delete: the endpoint and its log.
		if code, _, raw := e.do("DELETE", "/admin/api/webhooks/"+id, "", "", tok); code != http.StatusNoContent {
			t.Fatalf("delete: %d %s", code, raw)
		}
		if _, err := s.GetWebhookEndpoint(ctx, id); err == nil {
			t.Fatal("delete did not delete")
		}
		if code, _, _ := e.do("GET", "/admin/api/webhooks/"+id+"/deliveries", "", "", tok); code != 404 {
			t.Fatalf("deliveries after delete: %d", code)
		}

		// Every change audited by the token's actor, in order, no secret.
		actions, raw := e.tokenAudit(tok, false)
		want := "webhook.create webhook.update webhook.disable webhook.enable webhook.rotate_secret delivery.replay webhook.delete"
		if strings.Join(actions, " ") != want {
			t.Errorf("audit %v, want %s", actions, want)
		}
		if strings.Contains(raw, "whsec_") {
			t.Error("the audit log holds a webhook secret")
		}
	})
}

// TestAPIWebhooksDevelopment: in development, http to loopback is admitted
// and http elsewhere still refused (docs/reference.md §10's fetch rules).
func TestAPIWebhooksDevelopment(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	sealer, _ := webhook.NewSealer([]byte(strings.Repeat("k", 32)))
	e := newEnvWith(t, s, adminapi.NewTokenAuth(adminToken), func(c *admin.Config) { c.Webhooks = sealer; c.Development = true })
	tok := withToken(adminToken)
	if _, err := s.PutCatalog(ctx, store.Catalog{Business: store.Business{Reference: "biz-a", Name: "A",
		Category: store.CategoryAppointment, TimeZone: "Europe/Lisbon", Currency: "EUR"}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://127.0.0.1:9/in", "http://localhost:9/in"} {
		if code, _, raw := e.do("POST", "/admin/api/webhooks", "application/json", `{"business":"biz-a","url":"`+u+`"}`, tok); code != 201 {
			t.Errorf("%s in development: %d %s", u, code, raw)
		}
	}
	code, m, raw := e.do("POST", "/admin/api/webhooks", "application/json", `{"business":"biz-a","url":"http://hooks.example/in"}`, tok)
	if code != 400 || !strings.Contains(strings.Join(problemPaths(m), "\n"), "loopback address in development") {
		t.Errorf("http to a public host in development: %d %s", code, raw)
	}
}

// join is a JSON list of strings, sorted, comma separated.
func join(v any) string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, s := range l {
		out[i], _ = s.(string)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
