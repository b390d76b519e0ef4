package consentui_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/demo"
	lsmail "github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

// system is the authorization server wired as the authserver command wires
// it — these pages, the identity service's Mailer and the mutation
// service's Notifier on one notifications outbox whose worker delivers to
// an in-process SMTP server — and the resource server, on one SQLite store.
// The resource server's clock can be moved past its ≤ 5 s link cache, and
// the identity service's behind, to age a sign-in.
type system struct {
	t      *testing.T
	store  *sqlstore.Store
	url    string // the issuer
	rsURL  string // the resource server
	smtp   *testkit.SMTPServer
	logs   *syncBuffer
	rsSkew atomic.Int64
	// idSkew moves the identity service's clock: a sign-in made with it
	// behind starts a session that is already that old.
	idSkew atomic.Int64
}

func newSystem(t *testing.T) *system {
	t.Helper()
	bg := context.Background()
	sy := &system{t: t, store: sqltest.SQLite(t), logs: &syncBuffer{}, smtp: testkit.NewSMTPServer(t)}
	logger := slog.New(slog.NewTextHandler(sy.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var h, rsh http.Handler
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	rs := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rsh.ServeHTTP(w, r) }))
	sy.url, sy.rsURL = srv.URL, rs.URL
	secret := bytes.Repeat([]byte("s"), 32)
	cfg := config.Config{Issuer: srv.URL, Resource: rs.URL + "/mcp", SecretKey: secret,
		RefreshIdle: 30 * 24 * time.Hour, RefreshAbsolute: 90 * 24 * time.Hour}
	settings, err := lsmail.ParseURL(sy.smtp.URL())
	must(t, err, "SMTP URL")
	notes, err := app.NewNotifications(cfg, sy.store, app.NotificationOptions{Logger: logger,
		Mail: &lsmail.SMTP{Composer: lsmail.Composer{From: lsmail.DefaultFrom("127.0.0.1"), Host: "127.0.0.1"}, Settings: settings}})
	must(t, err, "notifications")
	notes.Worker.Poll = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(bg)
	t.Cleanup(cancel)
	// The cheap hasher: under a loaded test machine argon2id's bounded
	// slots can answer a sign-up 503 (internal/password tests that). The
	// services' clock (so the identity service's sign-ins) follows idSkew;
	// the OAuth endpoints' stays the system's.
	idClock := func() time.Time { return store.UTC(time.Now().Add(time.Duration(sy.idSkew.Load()))) }
	h, _, err = authhttp.Wire(ctx, authhttp.Deps{Store: sy.store, Config: cfg, Logger: logger},
		authhttp.Wiring{Services: app.ServiceOptions{Notifications: notes, Hasher: cheapHasher{}, Clock: idClock}})
	must(t, err, "authorization server")
	rsClock := func() time.Time { return store.UTC(time.Now().Add(time.Duration(sy.rsSkew.Load()))) }
	rsh, err = rshttp.New(bg, rshttp.Deps{Store: sy.store, Config: cfg, Logger: logger, Clock: rsClock})
	must(t, err, "resource server")
	now := store.SystemClock()
	must(t, sy.store.CreateClient(bg, demo.Client(now)), "client")
	return sy
}

// demoClient is golang.org/x/oauth2 configured for the demo client, with a
// loopback redirect URI of its own; waitClient waits (10 s at most) for
// the answer that redirect URI receives.
func (sy *system) demoClient() (conf *oauth2.Config, waitClient func(what string) url.Values) {
	cl, got := clientListener(sy.t)
	conf = &oauth2.Config{ClientID: "demo-mcp-client", RedirectURL: cl.URL + "/callback", Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: sy.url + "/oauth2/authorize", TokenURL: sy.url + "/oauth2/token",
			AuthStyle: oauth2.AuthStyleInParams}}
	return conf, func(what string) url.Values {
		sy.t.Helper()
		select {
		case q := <-got:
			return q
		case <-time.After(10 * time.Second):
			sy.t.Fatalf("%s: the client's redirect URI was never reached", what)
			return nil
		}
	}
}

// toolsList calls tools/list on the resource server with token and returns
// the HTTP status.
func (sy *system) toolsList(token string) int {
	sy.t.Helper()
	req, _ := http.NewRequest("POST", sy.rsURL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	must(sy.t, err, "call the resource server")
	res.Body.Close()
	return res.StatusCode
}

// mailLink is env.mailLink for the system's SMTP server.
func (sy *system) mailLink(n int, addr, path string) string {
	sy.t.Helper()
	return sy.url + mailLink(sy.t, sy.smtp, sy.url, n, addr, path)
}

// mailsTo waits until the SMTP server has received at least n e-mails and
// returns, parsed, those to addr whose subject starts with prefix.
func (sy *system) mailsTo(n int, addr, prefix string) []parsedMail {
	sy.t.Helper()
	var out []parsedMail
	for _, m := range sy.smtp.WaitFor(sy.t, n, mailWait) {
		if len(m.To) != 1 || m.To[0] != addr {
			continue
		}
		msg, parts := testkit.ParseMail(sy.t, m.Data)
		if s := testkit.Subject(sy.t, msg); strings.HasPrefix(s, prefix) {
			out = append(out, parsedMail{Subject: s, Parts: parts})
		}
	}
	return out
}

type parsedMail struct {
	Subject string
	Parts   []testkit.MailPart
}
