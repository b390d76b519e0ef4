package adminui_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/consent-ui/admin"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/webhook"
)

// TestWebhookPages: an admin registers an endpoint on the pages (its secret
// shown once), sees it listed, its delivery log and the failed deliveries,
// replays one, disables, rotates and deletes it; a bad URL is refused with
// the problem shown and nothing written; a person who is not an admin sees
// none of it.
func TestWebhookPages(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	e := newEnv(t, s)
	sealer, _ := webhook.NewSealer([]byte(strings.Repeat("w", 32)))
	svc, err := admin.New(admin.Config{Store: s, Webhooks: sealer, Development: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := adminui.New(svc, chrome{s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Config.Handler = h
	const adm = "acct_admin"
	if _, err := svc.ImportCatalog(ctx, admin.Actor{ID: "cli"}, []byte(
		"businesses:\n  - {reference: barber, name: Barber, category: appointment, timezone: Europe/Rome, currency: EUR, contact_email: desk@barber.example}\n"), "yaml"); err != nil {
		t.Fatal(err)
	}
	if _, body := e.get(adm, "/admin/businesses"); !strings.Contains(body, "desk@barber.example") {
		t.Errorf("businesses page does not show the contact e-mail:\n%s", body)
	}
	resp, body := e.post(adm, "/admin/webhooks", form("business", "barber", "url", "ftp://hooks.example/x", "events", "booking.created"))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "must be an https URL") {
		t.Fatalf("bad URL: %d\n%s", resp.StatusCode, body)
	}
	if ws, _ := svc.ListWebhooks(ctx, ""); len(ws) != 0 {
		t.Fatal("a refused endpoint was stored")
	}
	resp, body = e.post(adm, "/admin/webhooks", form("business", "barber", "url", "https://hooks.example/in",
		"events", "booking.created", "events", "booking.cancelled"))
	// html/template writes a "+" of the base64 secret as &#43;.
	secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(html.UnescapeString(body))
	if resp.StatusCode != 200 || secret == "" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d\n%s", resp.StatusCode, body)
	}
	ws, _ := svc.ListWebhooks(ctx, "barber")
	if len(ws) != 1 || strings.Join(ws[0].Events, ",") != "booking.cancelled,booking.created" {
		t.Fatalf("endpoints %+v", ws)
	}
	id := ws[0].ID
	if _, body := e.get(adm, "/admin/webhooks"); !strings.Contains(body, "https://hooks.example/in") || strings.Contains(body, secret) {
		t.Fatalf("list page:\n%s", body)
	}
	// A failed delivery is listed and replayed with its id.
	now := time.Now().UTC()
	if err := s.EnqueueMessages(ctx, store.OutboxMessage{ID: "msg_failed1", Channel: store.ChannelWebhook, Topic: "booking.created",
		EndpointID: id, Payload: []byte(`{}`), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LeaseMessages(ctx, "w", now, time.Minute, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishAttempt(ctx, "w", store.DeliveryAttempt{MessageID: "msg_failed1", Attempt: 1, StatusCode: 500, Error: "the endpoint answered 500", At: now}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, body := e.get(adm, "/admin/webhooks"); !strings.Contains(body, "msg_failed1") || !strings.Contains(body, "the endpoint answered 500") {
		t.Fatalf("failed deliveries not listed:\n%s", body)
	}
	if _, body := e.get(adm, "/admin/webhooks/"+id); !strings.Contains(body, "msg_failed1") || !strings.Contains(body, "HTTP 500") {
		t.Fatalf("endpoint page:\n%s", body)
	}
	resp, _ = e.post(adm, "/admin/deliveries/msg_failed1/replay", form("back", "endpoint"))
	if m, _ := s.GetMessage(ctx, "msg_failed1"); resp.StatusCode != http.StatusSeeOther || m.Status != store.OutboxQueued ||
		resp.Header.Get("Location") != "/admin/webhooks/"+id+"?done=replayed" {
		t.Fatalf("replay: %d %s %s", resp.StatusCode, m.Status, resp.Header.Get("Location"))
	}
	e.post(adm, "/admin/webhooks/"+id+"/disable", form())
	if ep, _ := s.GetWebhookEndpoint(ctx, id); ep.Enabled {
		t.Fatal("disable did not disable")
	}
	_, body = e.post(adm, "/admin/webhooks/"+id+"/rotate-secret", form())
	if s2 := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(html.UnescapeString(body)); s2 == "" || s2 == secret {
		t.Fatalf("rotate:\n%s", body)
	}
	if resp, _ := e.post(adm, "/admin/webhooks/"+id+"/delete", form()); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("delete without confirmation: %d", resp.StatusCode)
	}
	e.post(adm, "/admin/webhooks/"+id+"/delete", form("confirm", "yes"))
	if _, err := s.GetWebhookEndpoint(ctx, id); err == nil {
		t.Fatal("delete did not delete")
	}
	if resp, _ := e.get("acct_person", "/admin/webhooks"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a person on the webhooks page: %d", resp.StatusCode)
	}
}
