package consentui_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	consentui "github.com/linkslot/linkslot/consent-ui"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/identity"
	lsmail "github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/passkey"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer collects log output from concurrent handlers.
type syncBuffer = testkit.SyncBuffer

// env is a running UI on a real store, with a test route that renders the
// consent page and a fake authorize endpoint that it posts to.
type env struct {
	t     *testing.T
	store *sqlstore.Store
	ui    *consentui.UI
	srv   *httptest.Server
	clock *fakeClock
	logs  *syncBuffer
	// redirectTo is where the fake authorize endpoint sends an allowed or
	// denied consent (the client's redirect URI).
	redirectTo string
	// mail keeps the account e-mails (verification and reset links),
	// unless smtp is set.
	mail *mailbox
	// base is the address a browser opens: srv.URL, or with
	// envOpts.localhost the issuer http://localhost:PORT.
	base string
	// smtp receives every e-mail the outbox worker delivers (envOpts.smtp).
	smtp *testkit.SMTPServer
}

type envOpts struct {
	// argon2 uses the real password hasher; the default is a cheap one
	// that keeps the many sign-ins of the handler tests fast.
	argon2   bool
	hasher   identity.Hasher // when set, instead of either
	issuer   string
	throttle identity.ThrottlePolicy
	store    *sqlstore.Store
	// mutations gives the pages the mutation service, with the
	// notifications outbox as its Notifier (My bookings and account
	// deletion cancel through it).
	mutations bool
	// localhost serves on a port picked first and makes the issuer
	// http://localhost:PORT, a secure context with a host name, as
	// browsers require for passkeys.
	localhost bool
	// smtp sends every e-mail (account links, booking notifications)
	// through the notifications outbox, delivered by its worker to an
	// in-process SMTP server (env.smtp); the issuer defaults to the test
	// server's URL.
	smtp bool
	// mailer, when set, queues the account e-mails instead of env.mail.
	mailer identity.Mailer
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	e := &env{t: t, store: o.store, clock: &fakeClock{t: time.Now().UTC().Truncate(time.Second)}, logs: &syncBuffer{}, mail: &mailbox{}}
	if e.store == nil {
		e.store = sqltest.SQLite(t)
	}
	var ln net.Listener
	if o.localhost {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		o.issuer = fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	}
	var h http.Handler
	e.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	if ln != nil {
		e.srv.Listener.Close()
		e.srv.Listener = ln
		e.base = o.issuer
	}
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	if e.base == "" {
		e.base = e.srv.URL
	}
	var mailer identity.Mailer = e.mail
	var notifier mutation.Notifier
	if o.smtp {
		// The outbox and its worker, delivering to an SMTP server.
		if o.issuer == "" {
			o.issuer = e.srv.URL
		}
		e.smtp = testkit.NewSMTPServer(t)
		settings, err := lsmail.ParseURL(e.smtp.URL())
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Config{Issuer: o.issuer, SecretKey: bytes.Repeat([]byte("k"), 32)}
		host := strings.TrimPrefix(strings.TrimPrefix(o.issuer, "http://"), "https://")
		host, _, _ = strings.Cut(host, ":")
		notes, err := app.NewNotifications(cfg, e.store, app.NotificationOptions{Clock: e.clock.Now,
			Mail: &lsmail.SMTP{Composer: lsmail.Composer{From: lsmail.DefaultFrom(host), Host: host}, Settings: settings}})
		if err != nil {
			t.Fatal(err)
		}
		notes.Worker.Poll = 50 * time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go notes.Worker.Run(ctx)
		mailer, notifier = app.AccountMailer(notes.Notifier), notes.Notifier
	}
	if o.mailer != nil {
		mailer = o.mailer
	}
	logger := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var hasher identity.Hasher = cheapHasher{}
	if o.argon2 {
		hasher = nil // internal/password
	}
	if o.hasher != nil {
		hasher = o.hasher
	}
	id, err := identity.New(identity.Config{Store: e.store, Clock: e.clock.Now, Throttle: o.throttle, Hasher: hasher,
		Mailer: mailer, Issuer: o.issuer})
	if err != nil {
		t.Fatal(err)
	}
	// The services the server's wiring builds once (app.NewAuthServices),
	// here with the test's clock, hasher, throttle and mailer.
	pk, err := passkey.New(passkey.Config{Store: e.store, Identity: id, Issuer: o.issuer, Clock: e.clock.Now, Mailer: id.Mailer()})
	if err != nil {
		t.Fatal(err)
	}
	engine := booking.NewService(e.store, e.clock.Now)
	key := bytes.Repeat([]byte("k"), 32)
	var feeds *feed.Feeds
	if o.issuer != "" {
		if feeds, err = feed.New(e.store, key, o.issuer, e.clock.Now); err != nil {
			t.Fatal(err)
		}
	}
	var muts *mutation.Service
	if o.mutations {
		issuer := o.issuer
		if issuer == "" {
			issuer = "http://127.0.0.1:8080"
		}
		if notifier == nil {
			n, err := notify.New(notify.Options{Issuer: issuer, Clock: e.clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			notifier = n
		}
		muts = app.NewMutations(e.store, engine, nil, notifier, e.clock.Now)
	}
	e.ui, err = consentui.New(consentui.Config{Store: e.store, Identity: id, Passkeys: pk, Bookings: engine, Feeds: feeds,
		SecretKey: key, Issuer: o.issuer, Logger: logger, Clock: e.clock.Now, Mutations: muts})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	e.ui.Mount(mux)
	mux.HandleFunc("GET /test/authorize", e.testAuthorize)
	mux.HandleFunc("POST /test/authorize", e.testAuthorize)
	h = mux
	if err := e.store.CreateClient(context.Background(), store.Client{ID: "agent", Name: "Trip Planner", Public: true,
		RedirectURIs: []string{"http://127.0.0.1/callback"}, AllowedScopes: []string{"openid", "bookings:read", "bookings:write"},
		CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	return e
}

// testAuthorize stands in for the authorize endpoint: it uses only the
// consent.UI methods, the way the authorization server does.
func (e *env) testAuthorize(w http.ResponseWriter, r *http.Request) {
	acct, ok := e.ui.CurrentAccount(r)
	if !ok {
		e.ui.LoginRedirect(w, r, r.URL.RequestURI())
		return
	}
	if r.Method == http.MethodPost {
		if !e.ui.VerifyCSRF(r) {
			e.ui.RenderError(w, r, http.StatusForbidden, "This request has expired", "Start again from the app.")
			return
		}
		target := r.PostFormValue("redirect_uri")
		if target == "" {
			target = e.redirectTo
		}
		q := url.Values{"state": {r.PostFormValue("state")}}
		if r.PostFormValue("decision") == "allow" {
			if _, err := e.store.UpsertLink(r.Context(), acct.ID, r.PostFormValue("client_id"),
				scope.Parse(r.PostFormValue("scope")), e.clock.Now()); err != nil {
				http.Error(w, "link", 500)
				return
			}
			q.Set("code", "test-code")
		} else {
			q.Set("error", "access_denied")
		}
		http.Redirect(w, r, target+"?"+q.Encode(), http.StatusFound)
		return
	}
	name := "Trip Planner"
	if n := r.URL.Query().Get("client_name"); n != "" {
		name = n // a name from outside, as a metadata document gives it
	}
	params := url.Values{"client_id": {"agent"}, "response_type": {"code"}, "scope": {"openid bookings:read bookings:write"},
		"state": {"st-123"}, "redirect_uri": {r.URL.Query().Get("redirect_uri")}}
	var scopes []scope.Scope
	for _, n := range scope.Parse(params.Get("scope")) {
		s, _ := scope.Lookup(n)
		scopes = append(scopes, s)
	}
	ru, _ := url.Parse(params.Get("redirect_uri"))
	e.ui.RenderConsent(w, r, consent.ConsentView{ClientName: name, ClientID: "agent", RedirectHost: ru.Host,
		AccountEmail: acct.Email, Scopes: scopes, Action: "/test/authorize", Params: params, CSRFToken: e.ui.CSRFToken(w, r),
		EmailUnverified: r.URL.Query().Get("unverified") == "1"})
}

// client is a cookie-keeping HTTP client that does not follow redirects.
type client struct {
	e      *env
	hc     *http.Client
	bodies []string
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{e: e, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (c *client) do(method, path string, form url.Values) resp {
	c.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.e.srv.URL+path, body)
	if err != nil {
		c.e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	c.bodies = append(c.bodies, string(b))
	return resp{res.StatusCode, res.Header, string(b)}
}

func (c *client) get(path string) resp { return c.do(http.MethodGet, path, nil) }

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf fetches a page and returns its form token.
func (c *client) csrf(path string) string {
	c.e.t.Helper()
	r := c.get(path)
	if r.status == http.StatusSeeOther {
		r = c.get(r.header.Get("Location"))
	}
	m := csrfRE.FindStringSubmatch(r.body)
	if m == nil {
		c.e.t.Fatalf("no CSRF field on %s (status %d)", path, r.status)
	}
	return html.UnescapeString(m[1])
}

// post submits a form with the token of the page at from.
func (c *client) post(from, path string, form url.Values) resp {
	c.e.t.Helper()
	form.Set("csrf_token", c.csrf(from))
	return c.do(http.MethodPost, path, form)
}

func (c *client) signUp(email, pw string) {
	c.e.t.Helper()
	r := c.post("/signup", "/signup", url.Values{"email": {email}, "password": {pw}, "password_repeat": {pw}})
	if r.status != 200 || !strings.Contains(r.body, "Sign in") {
		c.e.t.Fatalf("sign-up: %d %s", r.status, r.body)
	}
}

func (c *client) logIn(email, pw string) resp {
	c.e.t.Helper()
	return c.post("/login", "/login", url.Values{"email": {email}, "password": {pw}})
}

func (c *client) signUpAndIn(email, pw string) store.Account {
	c.e.t.Helper()
	c.signUp(email, pw)
	if r := c.logIn(email, pw); r.status != http.StatusSeeOther {
		c.e.t.Fatalf("log in: %d", r.status)
	}
	a, err := c.e.store.GetAccountByEmail(context.Background(), email)
	if err != nil {
		c.e.t.Fatal(err)
	}
	return a
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// cheapHasher stands in for argon2id where a test signs in many times.
type cheapHasher struct{}

func (cheapHasher) Hash(_ context.Context, pw string) (string, error) {
	return "test:" + store.HashSecret("salt:"+pw), nil
}
func (cheapHasher) Check(_ context.Context, h, pw string) (bool, string, error) {
	return h == "test:"+store.HashSecret("salt:"+pw), "", nil
}

// mailbox keeps the account e-mails the identity service queues.
type mailbox struct {
	mu    sync.Mutex
	mails []identity.Mail
}

func (m *mailbox) MailOff() bool { return false }

func (m *mailbox) QueueMail(_ context.Context, _ identity.MailTx, mail identity.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mails = append(m.mails, mail)
	return nil
}

func (m *mailbox) all() []identity.Mail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]identity.Mail(nil), m.mails...)
}

// mailWait bounds the wait for an e-mail: the outbox worker polls every
// 50 ms, but a first delivery that fails on a loaded machine is retried
// 5–10 s later.
const mailWait = 45 * time.Second

// linkRE finds a link of the account e-mails' in a text part.
var linkRE = regexp.MustCompile(`https?://[^\s"<>]+\?token=[A-Za-z0-9_%-]+`)

// mailLink waits until the SMTP server has received at least n e-mails,
// and returns the link to path (relative to the server) of the newest one
// that has such a link, after checking it went to addr and parsing it with
// the MIME libraries: a text part with the link (and any HTML part with
// it too).
func (e *env) mailLink(n int, addr, path string) string {
	e.t.Helper()
	return mailLink(e.t, e.smtp, e.base, n, addr, path)
}

func mailLink(t *testing.T, smtp *testkit.SMTPServer, base string, n int, addr, path string) string {
	t.Helper()
	ms := smtp.WaitFor(t, n, mailWait)
	for i := len(ms) - 1; i >= 0; i-- {
		msg, parts := testkit.ParseMail(t, ms[i].Data)
		text, htmlPart := testkit.FindPart(parts, "text/plain", false), testkit.FindPart(parts, "text/html", false)
		if text == nil {
			t.Fatalf("e-mail %q lacks a text part", testkit.Subject(t, msg))
		}
		for _, l := range linkRE.FindAllString(text.Body, -1) {
			u, err := url.Parse(l)
			if err != nil || u.Path != path || !strings.HasPrefix(l, base) {
				continue
			}
			if len(ms[i].To) != 1 || ms[i].To[0] != addr {
				t.Fatalf("the e-mail with the link to %s went to %v, want %s", path, ms[i].To, addr)
			}
			if htmlPart != nil && !strings.Contains(htmlPart.Body, html.EscapeString(l)) {
				t.Errorf("the HTML part of %q lacks the link", testkit.Subject(t, msg))
			}
			return strings.TrimPrefix(l, base)
		}
	}
	t.Fatalf("none of %d e-mails has a link to %s", len(ms), path)
	return ""
}
