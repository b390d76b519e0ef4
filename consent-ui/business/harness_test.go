package businessui_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

const password = "Console-Test-Passphrase-42"

// Other accounts of the tests besides the demo owner and staff member.
const (
	outsiderEmail = "outsider@example.com" // a member of nothing
	otherEmail    = "other-owner@example.com"
	otherBusiness = "biz-thames-physio"
)

// cheapHasher stands in for argon2id: the tests sign in many times.
type cheapHasher struct{}

func (cheapHasher) Hash(_ context.Context, pw string) (string, error) {
	return "test:" + store.HashSecret("salt:"+pw), nil
}
func (cheapHasher) Check(_ context.Context, h, pw string) (bool, string, error) {
	return h == "test:"+store.HashSecret("salt:"+pw), "", nil
}

// env is the whole authorization server (authhttp.Wire, the console
// included) on a real store with the demo data: owner@example.com owns
// Brightcut Barbers, staff@example.com is its Dana Kowalski,
// other-owner@example.com owns Thames Physiotherapy, and
// outsider@example.com is a member of nothing.
type env struct {
	t     *testing.T
	store *sqlstore.Store
	srv   *httptest.Server
	cat   store.Catalog // Brightcut Barbers
	loc   *time.Location
}

func newEnv(t *testing.T, s *sqlstore.Store) *env {
	t.Helper()
	ctx := context.Background()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config.Config{Issuer: srv.URL, Resource: "http://127.0.0.1:8081/mcp", SecretKey: []byte("console-test-secret-key-console-test-secret"),
		RefreshIdle: time.Hour, RefreshAbsolute: 2 * time.Hour, VarDir: t.TempDir(), MailFrom: "linkslot@example.com"}
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	handler, _, err := authhttp.Wire(wctx, authhttp.Deps{Store: s, Logger: log, Config: cfg},
		authhttp.Wiring{Services: app.ServiceOptions{Hasher: cheapHasher{}}})
	if err != nil {
		t.Fatal(err)
	}
	h = handler
	now := time.Now()
	if _, err := demo.Load(ctx, s, demo.Data{Password: password, Hash: func(p string) (string, error) { return cheapHasher{}.Hash(ctx, p) },
		Catalogs: booking.DemoCatalogs(now)[:2]}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{outsiderEmail, otherEmail} {
		hash, _ := cheapHasher{}.Hash(ctx, password)
		if err := s.CreateAccount(ctx, store.Account{ID: store.NewID("acct"), Email: e, PasswordHash: hash, CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}); err != nil {
			t.Fatal(err)
		}
	}
	other, _ := s.GetBusiness(ctx, otherBusiness)
	oa, _ := s.GetAccountByEmail(ctx, otherEmail)
	if err := s.AddMember(ctx, store.Member{BusinessID: other.ID, AccountID: oa.ID, Role: store.RoleOwner, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	cat, err := s.LoadCatalog(ctx, demo.MemberBusiness)
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation(cat.Business.TimeZone)
	return &env{t: t, store: s, srv: srv, cat: cat, loc: loc}
}

func (e *env) staff(ref string) store.Staff {
	for _, st := range e.cat.Staff {
		if st.Reference == ref {
			return st
		}
	}
	e.t.Fatalf("no staff %s", ref)
	return store.Staff{}
}

func (e *env) service(ref string) store.Service {
	for _, sv := range e.cat.Services {
		if sv.Reference == ref {
			return sv
		}
	}
	e.t.Fatalf("no service %s", ref)
	return store.Service{}
}

// nextWeekday is the local day at hh:mm of the first wd after today plus
// skip days.
func (e *env) nextWeekday(wd time.Weekday, skip, hh, mm int) time.Time {
	d := time.Now().In(e.loc).AddDate(0, 0, 1+skip)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, 1)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), hh, mm, 0, 0, e.loc)
}

// book inserts a booking of the demo person (as an agent would have made
// it) with staff at start, in the given state.
func (e *env) book(staffRef, serviceRef string, start time.Time, status string) store.Booking {
	e.t.Helper()
	ctx := context.Background()
	person, err := e.store.GetAccountByEmail(ctx, demo.AccountEmail)
	if err != nil {
		e.t.Fatal(err)
	}
	sv := e.service(serviceRef)
	end := start.Add(time.Duration(sv.DurationMinutes) * time.Minute)
	now := time.Now().UTC()
	b := store.Booking{ID: store.NewID("bkg"), Reference: booking.NewReference(), BusinessID: e.cat.Business.ID, ServiceID: sv.ID,
		StaffID: e.staff(staffRef).ID, AccountID: person.ID, StartsAt: start.UTC(), EndsAt: end.UTC(),
		BlockStart: start.Add(-time.Duration(sv.BufferBeforeMinutes) * time.Minute).UTC(),
		BlockEnd:   end.Add(time.Duration(sv.BufferAfterMinutes) * time.Minute).UTC(),
		Status:     status, Version: 1, PriceCents: sv.PriceCents, Currency: sv.Currency, Notes: "Short on the sides, please.",
		CreatedAt: now, UpdatedAt: now}
	if status == store.BookingPending {
		rb := start.Add(-time.Hour).UTC()
		b.RespondBy = &rb
	}
	if err := e.store.InsertBooking(ctx, b); err != nil {
		e.t.Fatal(err)
	}
	return b
}

// client is a browser without JavaScript: a cookie jar, redirects not
// followed.
type client struct {
	e *env
	c *http.Client
}

func (e *env) anonymous() *client {
	jar, _ := cookiejar.New(nil)
	return &client{e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// signIn signs in through the sign-in page.
func (e *env) signIn(email string) *client {
	e.t.Helper()
	c := e.anonymous()
	_, body := c.get("/login")
	form := testkit.HiddenFields(body)
	form.Set("email", email)
	form.Set("password", password)
	resp, _ := c.postRaw("/login", form)
	if resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("sign in %s: %d", email, resp.StatusCode)
	}
	return c
}

func (c *client) get(path string) (*http.Response, string) {
	c.e.t.Helper()
	resp, err := c.c.Get(c.e.srv.URL + path)
	if err != nil {
		c.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (c *client) postRaw(path string, form url.Values) (*http.Response, string) {
	c.e.t.Helper()
	resp, err := c.c.Post(c.e.srv.URL+path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		c.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// post submits form with a CSRF token from page (a console page the
// client may see).
func (c *client) post(path string, form url.Values) (*http.Response, string) {
	c.e.t.Helper()
	_, body := c.get("/account")
	tok := testkit.HiddenFields(body).Get(consent.CSRFField)
	if tok == "" {
		c.e.t.Fatal("no CSRF token on /account")
	}
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	f.Set(consent.CSRFField, tok)
	return c.postRaw(path, f)
}

// agent is the demo person's linked MCP client: the resource server on the
// same store (its own booking engine, so its own catalog cache, as another
// replica's) and an access token linked through the real pages.
type agent struct {
	e        *env
	endpoint string
	token    string
}

func (e *env) linkAgent() *agent {
	e.t.Helper()
	ctx := context.Background()
	const resource = "http://127.0.0.1:8081/mcp"
	rsH, err := rshttp.New(ctx, rshttp.Deps{Store: e.store, Config: config.Config{Issuer: e.srv.URL, Resource: resource,
		SecretKey: []byte("console-test-secret-key-console-test-secret"), RefreshIdle: time.Hour, RefreshAbsolute: 2 * time.Hour},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), NoRateLimits: true})
	if err != nil {
		e.t.Fatal(err)
	}
	rs := httptest.NewServer(rsH)
	e.t.Cleanup(rs.Close)
	tok, err := testkit.LinkThroughPages(ctx, testkit.LinkRequest{OAuth: &oauth2.Config{ClientID: demo.ClientID,
		RedirectURL: "http://127.0.0.1:45681/callback", Scopes: demo.Client(time.Now()).AllowedScopes,
		Endpoint: oauth2.Endpoint{AuthURL: e.srv.URL + "/oauth2/authorize", TokenURL: e.srv.URL + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}},
		Email: demo.AccountEmail, Password: password, Resource: resource})
	if err != nil {
		e.t.Fatalf("link the agent: %v", err)
	}
	return &agent{e: e, endpoint: rs.URL + "/mcp", token: tok.AccessToken}
}

// call makes one tools/call and answers its structured content and whether
// it is an error result.
func (a *agent) call(tool string, args map[string]any) (map[string]any, bool) {
	a.e.t.Helper()
	req, err := testkit.ToolCallRequest(context.Background(), a.endpoint, a.token, tool, args)
	if err != nil {
		a.e.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var rpc struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rpc); err != nil || resp.StatusCode != http.StatusOK {
		a.e.t.Fatalf("%s: %d %v", tool, resp.StatusCode, err)
	}
	return rpc.Result.StructuredContent, rpc.Result.IsError
}

// book creates a booking through summarize-then-confirm, as an agent does,
// and answers its reference and status.
func (a *agent) book(staffRef, serviceRef string, start time.Time, key string) (ref, status string) {
	a.e.t.Helper()
	args := map[string]any{"business_reference": demo.MemberBusiness, "service_reference": serviceRef,
		"staff_reference": staffRef, "starts_at": start.Format(time.RFC3339)}
	sum, isErr := a.call("create_my_booking", args)
	if isErr || testkit.FindString(sum, "confirmed_summary") == "" {
		a.e.t.Fatalf("create_my_booking preview: %v", sum)
	}
	out, isErr := a.call("create_my_booking", testkit.ConfirmedArgs(args, testkit.FindString(sum, "confirmed_summary"), key, "Yes, book it."))
	if isErr {
		a.e.t.Fatalf("create_my_booking: %v", out)
	}
	return testkit.FindString(out, "booking_reference"), testkit.FindString(out, "status")
}

// slots answers check_business_availability's start times (HH:MM, local)
// of a staff member's service on a local date.
func (a *agent) slots(staffRef, serviceRef, date string) []string {
	a.e.t.Helper()
	out, isErr := a.call("check_business_availability", map[string]any{"business_reference": demo.MemberBusiness,
		"service_reference": serviceRef, "local_date": date, "with_staff_reference": staffRef})
	if isErr {
		a.e.t.Fatalf("check_business_availability: %v", out)
	}
	b, _ := json.Marshal(out)
	var ans struct {
		Availability struct {
			Staff []struct {
				Slots []struct {
					StartsAt time.Time `json:"starts_at"`
				} `json:"slots"`
			} `json:"staff"`
		} `json:"availability"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		a.e.t.Fatalf("availability answer: %v\n%s", err, b)
	}
	var hm []string
	for _, st := range ans.Availability.Staff {
		for _, sl := range st.Slots {
			hm = append(hm, sl.StartsAt.Format("15:04"))
		}
	}
	return hm
}
