package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// RunTests is the storage conformance suite: every method of store.Store,
// run against whatever backend open returns. Each group gets a fresh store
// from open, so groups are independent and run in parallel.
func RunTests(t *testing.T, open func(t testing.TB) store.Store) {
	t.Helper()
	groups := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"TimeRoundTrip", testTimeRoundTrip},
		{"Accounts", testAccounts},
		{"WebSessions", testWebSessions},
		{"Clients", testClients},
		{"ClientRegistrations", testClientRegistrations},
		{"ClientAssertions", testClientAssertions},
		{"Links", testLinks},
		{"Tokens", testTokens},
		{"TokensConcurrentDeactivate", testTokensConcurrent},
		{"TokenBatch", testTokenBatch},
		{"TokenBatchConcurrent", testTokenBatchConcurrent},
		{"TokenRotationRecord", testTokenRotationRecord},
		{"TokenRequireConcurrent", testTokenRequireConcurrent},
		{"PrefetchTokenRequest", testPrefetchTokenRequest},
		{"Begin", testBegin},
		{"Keys", testKeys},
		{"Catalog", testCatalog},
		{"Search", testSearch},
		{"Bookings", testBookings},
		{"BookingsConcurrent", testBookingsConcurrent},
		{"PendingHolds", testPendingHolds},
		{"AccountBookings", testAccountBookings},
		{"Idempotency", testIdempotency},
		{"IdempotencyConcurrent", testIdempotencyConcurrent},
		{"ActivityAndAudit", testActivityAudit},
		{"AccountTokens", testAccountTokens},
		{"Passkeys", testPasskeys},
		{"WebAuthnCeremonies", testCeremonies},
		{"SweepAccountTokens", testSweepAccountTokens},
		{"SweepOutbox", testSweepOutbox},
		{"SweepWebSessions", testSweepWebSessions},
		{"EraseAccount", testEraseAccount},
		{"Outbox", testOutbox},
		{"OutboxConcurrentLease", testOutboxConcurrent},
		{"WebhookEndpoints", testWebhookEndpoints},
		{"CalendarFeeds", testCalendarFeeds},
		{"CalendarTag", testCalendarTag},
		{"Members", testMembers},
		{"Console", testConsole},
		{"InTx", testInTx},
		{"Ping", testPing},
		{"Faults", testFaults},
		{"RateWindows", testRateWindows},
		{"RateWindowsConcurrent", testRateWindowsConcurrent},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.fn(t, open(t))
		})
	}
}

var ctx = context.Background()

// t0 has nanoseconds and a non-UTC zone on purpose: every backend must
// return store.UTC(t0) for it.
var t0 = time.Date(2030, 3, 4, 10, 0, 0, 123456789, time.FixedZone("X", 3600))

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

// sameInstant fails unless got is exactly store.UTC(want), in UTC.
func sameInstant(t testing.TB, what string, got, want time.Time) {
	t.Helper()
	w := store.UTC(want)
	if !got.Equal(w) || got.Location() != time.UTC || got.Nanosecond() != w.Nanosecond() {
		t.Errorf("%s = %v (%v), want %v (UTC, microseconds)", what, got, got.Location(), w)
	}
}

func newAccount(t testing.TB, s store.Store, email string) store.Account {
	t.Helper()
	a := store.Account{ID: store.NewID("acc"), Email: email, PasswordHash: "h", CreatedAt: t0, UpdatedAt: t0}
	must(t, s.CreateAccount(ctx, a))
	return a
}

func newClient(t testing.TB, s store.Store, id string) store.Client {
	t.Helper()
	c := store.Client{ID: id, Name: "Agent " + id, Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
		AllowedScopes: []string{"openid", "bookings:read"}, DefaultScopes: []string{"openid"},
		GrantTypes: []string{"authorization_code", "refresh_token"}, CreatedAt: t0, UpdatedAt: t0}
	must(t, s.CreateClient(ctx, c))
	return c
}

func testTimeRoundTrip(t *testing.T, s store.Store) {
	instants := []time.Time{
		t0,
		time.Date(2030, 1, 1, 0, 0, 0, 999, time.UTC),                               // below a microsecond
		time.Date(2030, 1, 1, 0, 0, 0, 1000, time.UTC),                              // exactly one
		time.Date(2030, 6, 30, 23, 59, 59, 999999999, time.FixedZone("Y", -7*3600)), // rolls over in UTC
		time.Date(2030, 1, 1, 12, 0, 0, 500000000, time.UTC),
	}
	for i, in := range instants {
		id := fmt.Sprintf("acc_rt%d", i)
		must(t, s.CreateAccount(ctx, store.Account{ID: id, Email: id + "@example.com", CreatedAt: in, UpdatedAt: in}))
		a, err := s.GetAccount(ctx, id)
		must(t, err)
		sameInstant(t, "CreatedAt", a.CreatedAt, in)
		sameInstant(t, "UpdatedAt", a.UpdatedAt, in)
	}
	// Ordering by time must follow instants, not text: 12:00:00 < 12:00:00.5.
	a1 := store.Activity{ID: "act_a", AccountID: "p", CreatedAt: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	a2 := store.Activity{ID: "act_b", AccountID: "p", CreatedAt: time.Date(2030, 1, 1, 12, 0, 0, 500000000, time.UTC)}
	a3 := store.Activity{ID: "act_c", AccountID: "p", CreatedAt: time.Date(2030, 1, 1, 12, 0, 0, 25000000, time.UTC)}
	for _, a := range []store.Activity{a1, a2, a3} {
		must(t, s.AddActivity(ctx, a))
	}
	got, err := s.ListActivity(ctx, "p", 10, 0)
	must(t, err)
	if ids := activityIDs(got); !slices.Equal(ids, []string{"act_b", "act_c", "act_a"}) {
		t.Errorf("activity order = %v, want [act_b act_c act_a]", ids)
	}
}

func activityIDs(l []store.Activity) []string {
	var out []string
	for _, a := range l {
		out = append(out, a.ID)
	}
	return out
}

func testAccounts(t *testing.T, s store.Store) {
	a := newAccount(t, s, "  Ana@Example.COM ")
	got, err := s.GetAccount(ctx, a.ID)
	must(t, err)
	if got.Email != "ana@example.com" || got.PasswordHash != "h" || got.Admin || got.Disabled {
		t.Errorf("GetAccount = %+v", got)
	}
	sameInstant(t, "CreatedAt", got.CreatedAt, t0)
	byEmail, err := s.GetAccountByEmail(ctx, "ANA@example.com")
	must(t, err)
	if byEmail.ID != a.ID {
		t.Errorf("GetAccountByEmail = %q, want %q", byEmail.ID, a.ID)
	}
	wantErr(t, s.CreateAccount(ctx, store.Account{ID: store.NewID("acc"), Email: "ana@EXAMPLE.com", CreatedAt: t0, UpdatedAt: t0}), store.ErrAlreadyExists)
	wantErr(t, s.CreateAccount(ctx, store.Account{ID: a.ID, Email: "other@example.com", CreatedAt: t0, UpdatedAt: t0}), store.ErrAlreadyExists)
	_, err = s.GetAccount(ctx, "acc_missing")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.GetAccountByEmail(ctx, "nobody@example.com")
	wantErr(t, err, store.ErrNotFound)

	b := newAccount(t, s, "bob@example.com")
	newAccount(t, s, "aaron@example.com")
	list, err := s.ListAccounts(ctx)
	must(t, err)
	var emails []string
	for _, x := range list {
		emails = append(emails, x.Email)
	}
	if !slices.Equal(emails, []string{"aaron@example.com", "ana@example.com", "bob@example.com"}) {
		t.Errorf("ListAccounts emails = %v", emails)
	}
	found, err := s.SearchAccounts(ctx, store.AccountQuery{Text: "A", Limit: 1})
	must(t, err)
	if len(found) != 2 || found[0].Email != "aaron@example.com" || found[1].Email != "ana@example.com" {
		t.Errorf("SearchAccounts(A, limit 1) = %+v, want aaron and ana (limit+1 rows)", found)
	}
	found, err = s.SearchAccounts(ctx, store.AccountQuery{Text: "%", Limit: 10})
	must(t, err)
	if len(found) != 0 {
		t.Errorf("SearchAccounts(%%) = %+v, want none (wildcards are literal)", found)
	}

	up, err := s.UpdateAccount(ctx, b.ID, func(x store.Account) (store.Account, error) {
		if x.Email != "bob@example.com" {
			t.Errorf("closure saw %+v", x)
		}
		x.Admin, x.Disabled, x.ID, x.CreatedAt = true, true, "acc_changed", time.Time{}
		return x, nil
	})
	must(t, err)
	if up.ID != b.ID || !up.Admin || !up.Disabled {
		t.Errorf("UpdateAccount = %+v", up)
	}
	got, err = s.GetAccount(ctx, b.ID)
	must(t, err)
	if !got.Admin || !got.Disabled {
		t.Errorf("after update = %+v", got)
	}
	sameInstant(t, "CreatedAt kept", got.CreatedAt, t0)
	boom := errors.New("boom")
	_, err = s.UpdateAccount(ctx, b.ID, func(x store.Account) (store.Account, error) { x.Admin = false; return x, boom })
	wantErr(t, err, boom)
	if got, _ := s.GetAccount(ctx, b.ID); !got.Admin {
		t.Error("UpdateAccount wrote despite the closure's error")
	}
	_, err = s.UpdateAccount(ctx, b.ID, func(x store.Account) (store.Account, error) { x.Email = "ANA@example.com"; return x, nil })
	wantErr(t, err, store.ErrAlreadyExists)
	_, err = s.UpdateAccount(ctx, "acc_missing", func(x store.Account) (store.Account, error) { return x, nil })
	wantErr(t, err, store.ErrNotFound)
}

func testWebSessions(t *testing.T, s store.Store) {
	a := newAccount(t, s, "ws@example.com")
	for _, h := range []string{"h1", "h2", "h3"} {
		must(t, s.CreateWebSession(ctx, store.WebSession{IDHash: h, AccountID: a.ID, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}))
	}
	wantErr(t, s.CreateWebSession(ctx, store.WebSession{IDHash: "h1", AccountID: a.ID, CreatedAt: t0, ExpiresAt: t0}), store.ErrAlreadyExists)
	ws, err := s.GetWebSession(ctx, "h1")
	must(t, err)
	if ws.AccountID != a.ID {
		t.Errorf("GetWebSession = %+v", ws)
	}
	sameInstant(t, "ExpiresAt", ws.ExpiresAt, t0.Add(time.Hour))
	// The session and its account in one read.
	ws2, acct, err := s.GetWebSessionAccount(ctx, "h1")
	must(t, err)
	want, err := s.GetAccount(ctx, a.ID)
	must(t, err)
	if ws2 != ws || acct.ID != want.ID || acct.Email != want.Email || acct.PasswordHash != want.PasswordHash ||
		acct.Admin != want.Admin || acct.Disabled != want.Disabled || !acct.CreatedAt.Equal(want.CreatedAt) ||
		!acct.UpdatedAt.Equal(want.UpdatedAt) || (acct.EmailVerifiedAt == nil) != (want.EmailVerifiedAt == nil) ||
		(acct.DeletedAt == nil) != (want.DeletedAt == nil) {
		t.Errorf("GetWebSessionAccount = %+v, %+v; want %+v, %+v", ws2, acct, ws, want)
	}
	must(t, s.DeleteWebSession(ctx, "h1"))
	_, err = s.GetWebSession(ctx, "h1")
	wantErr(t, err, store.ErrNotFound)
	_, _, err = s.GetWebSessionAccount(ctx, "h1")
	wantErr(t, err, store.ErrNotFound)
	must(t, s.DeleteAccountWebSessions(ctx, a.ID, "h3"))
	_, err = s.GetWebSession(ctx, "h2")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.GetWebSession(ctx, "h3")
	must(t, err)
	must(t, s.DeleteAccountWebSessions(ctx, a.ID, ""))
	_, err = s.GetWebSession(ctx, "h3")
	wantErr(t, err, store.ErrNotFound)
}

func testClientAssertions(t *testing.T, s store.Store) {
	exp := t0.Add(5 * time.Minute)
	must(t, s.UseClientAssertion(ctx, "jti_a", exp, t0))
	wantErr(t, s.UseClientAssertion(ctx, "jti_a", exp, t0.Add(time.Minute)), store.ErrAlreadyExists)
	// Once expired it is forgotten (an assertion past exp is refused anyway):
	// a new assertion with it records a fresh use.
	must(t, s.UseClientAssertion(ctx, "jti_a", exp.Add(10*time.Minute), exp.Add(time.Second)))

	// The sweep removes only ids whose assertion expired, in batches.
	for _, j := range []string{"jti_old1", "jti_old2", "jti_old3"} {
		must(t, s.UseClientAssertion(ctx, j, exp, t0))
	}
	sw := sweeps(t, s)
	sweepBatches(t, "SweepClientAssertions", 3, func(limit int) (int64, error) {
		return sw.SweepClientAssertions(ctx, exp.Add(time.Second), limit)
	})
	// jti_a's fresh use (until exp + 10 min) was kept: using it again is refused.
	wantErr(t, s.UseClientAssertion(ctx, "jti_a", exp.Add(10*time.Minute), exp.Add(2*time.Second)), store.ErrAlreadyExists)
	// A swept id had expired: a new assertion with it records a fresh use.
	must(t, s.UseClientAssertion(ctx, "jti_old1", exp.Add(10*time.Minute), exp.Add(time.Second)))

	// Concurrent uses of one jti: exactly one wins.
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() { errs <- s.UseClientAssertion(ctx, "jti_race", exp, t0) }()
	}
	wins := 0
	for i := 0; i < n; i++ {
		err := <-errs
		switch {
		case err == nil:
			wins++
		case errors.Is(err, store.ErrAlreadyExists):
		default:
			t.Errorf("concurrent use: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d concurrent uses of one jti succeeded, want 1", wins)
	}
}

func testClients(t *testing.T, s store.Store) {
	c := newClient(t, s, "cli_b")
	newClient(t, s, "cli_a")
	wantErr(t, s.CreateClient(ctx, c), store.ErrAlreadyExists)
	got, err := s.GetClient(ctx, "cli_b")
	must(t, err)
	if got.Name != c.Name || !got.Public || !slices.Equal(got.RedirectURIs, c.RedirectURIs) ||
		!slices.Equal(got.AllowedScopes, c.AllowedScopes) || !slices.Equal(got.DefaultScopes, c.DefaultScopes) ||
		!slices.Equal(got.GrantTypes, c.GrantTypes) {
		t.Errorf("GetClient = %+v", got)
	}
	_, err = s.GetClient(ctx, "cli_missing")
	wantErr(t, err, store.ErrNotFound)

	// A metadata-document client keeps its pinned document and origin; a
	// registered one its JWKS URL.
	u := store.Client{ID: "https://app.example/client.json", Name: "App", Public: true,
		AllowedScopes: []string{"openid"}, GrantTypes: []string{"authorization_code"},
		PinnedDocument: `{"client_id":"https://app.example/client.json"}`, OpenLinked: true, CreatedAt: t0, UpdatedAt: t0}
	must(t, s.CreateClient(ctx, u))
	if got, err := s.GetClient(ctx, u.ID); err != nil || got.PinnedDocument != u.PinnedDocument || !got.OpenLinked {
		t.Errorf("GetClient(URL client) = %+v, %v", got, err)
	}
	k := store.Client{ID: "cli_jwt", Name: "JWT", AllowedScopes: []string{"openid"}, GrantTypes: []string{"authorization_code"},
		RedirectURIs: []string{"https://jwt.example/cb"}, JWKSURI: "https://jwt.example/jwks.json",
		IDTokenSignedResponseAlg: "RS256", CreatedAt: t0, UpdatedAt: t0}
	must(t, s.CreateClient(ctx, k))
	if got, err := s.GetClient(ctx, k.ID); err != nil || got.JWKSURI != k.JWKSURI || got.IDTokenSignedResponseAlg != "RS256" {
		t.Errorf("GetClient(JWKS client) = %+v, %v", got, err)
	}
	// Every read of a client carries its ID token algorithm: the one
	// statement of an authorization and the token endpoint's prefetch too.
	if got, _, err := s.GetClientLink(ctx, k.ID, "acct_none"); err != nil || got.IDTokenSignedResponseAlg != "RS256" {
		t.Errorf("GetClientLink(RS256 client) = %+v, %v", got, err)
	}
	if p, err := s.PrefetchTokenRequest(ctx, k.ID, store.KindRefreshToken, "sig_none"); err != nil || p.Client.IDTokenSignedResponseAlg != "RS256" {
		t.Errorf("PrefetchTokenRequest(RS256 client) = %+v, %v", p.Client, err)
	}
	if _, err := s.UpdateClient(ctx, k.ID, func(x store.Client) (store.Client, error) { x.IDTokenSignedResponseAlg = ""; return x, nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetClient(ctx, k.ID); got.IDTokenSignedResponseAlg != "" {
		t.Errorf("after clearing the ID token algorithm: %q", got.IDTokenSignedResponseAlg)
	}
	must(t, s.DeleteClient(ctx, u.ID))
	must(t, s.DeleteClient(ctx, k.ID))

	list, err := s.ListClients(ctx)
	must(t, err)
	if len(list) != 2 || list[0].ID != "cli_a" || list[1].ID != "cli_b" {
		t.Errorf("ListClients = %+v", list)
	}
	up, err := s.UpdateClient(ctx, "cli_b", func(x store.Client) (store.Client, error) {
		x.Name, x.Disabled, x.RedirectURIs = "Renamed", true, []string{"https://a.example/cb", "https://b.example/cb"}
		return x, nil
	})
	must(t, err)
	if up.Name != "Renamed" || !up.Disabled {
		t.Errorf("UpdateClient = %+v", up)
	}
	got, _ = s.GetClient(ctx, "cli_b")
	if got.Name != "Renamed" || len(got.RedirectURIs) != 2 {
		t.Errorf("after UpdateClient = %+v", got)
	}
	sameInstant(t, "CreatedAt kept", got.CreatedAt, t0)
	boom := errors.New("boom")
	_, err = s.UpdateClient(ctx, "cli_b", func(x store.Client) (store.Client, error) { x.Name = "No"; return x, boom })
	wantErr(t, err, boom)
	if got, _ := s.GetClient(ctx, "cli_b"); got.Name != "Renamed" {
		t.Error("UpdateClient wrote despite the closure's error")
	}
	_, err = s.UpdateClient(ctx, "cli_missing", func(x store.Client) (store.Client, error) { return x, nil })
	wantErr(t, err, store.ErrNotFound)

	// Delete cascades to links and token sessions.
	a := newAccount(t, s, "owner@example.com")
	l, err := s.UpsertLink(ctx, a.ID, "cli_b", []string{"openid"}, t0)
	must(t, err)
	keep, err := s.UpsertLink(ctx, a.ID, "cli_a", []string{"openid"}, t0)
	must(t, err)
	for _, ts := range []store.TokenSession{
		{Kind: store.KindAccessToken, SignatureHash: "sig1", RequestID: "r1", ClientID: "cli_b", AccountID: a.ID, LinkID: l.ID},
		{Kind: store.KindAuthorizeCode, SignatureHash: "sig2", RequestID: "r2", ClientID: "cli_b", AccountID: a.ID}, // on no link
		{Kind: store.KindAccessToken, SignatureHash: "keep1", RequestID: "r3", ClientID: "cli_a", AccountID: a.ID, LinkID: keep.ID},
		{Kind: store.KindAuthorizeCode, SignatureHash: "keep2", RequestID: "r4", ClientID: "cli_a", AccountID: a.ID},
	} {
		ts.Active, ts.Request, ts.ExpiresAt, ts.CreatedAt = true, []byte("{}"), t0.Add(time.Hour), t0
		must(t, s.CreateTokenSession(ctx, ts))
	}
	must(t, s.DeleteClient(ctx, "cli_b"))
	_, err = s.GetTokenSession(ctx, store.KindAuthorizeCode, "sig2")
	wantErr(t, err, store.ErrNotFound)
	for kind, sig := range map[store.TokenKind]string{store.KindAccessToken: "keep1", store.KindAuthorizeCode: "keep2"} {
		if ts, err := s.GetTokenSession(ctx, kind, sig); err != nil || !ts.Active {
			t.Errorf("another client's session %s: active %v, %v", sig, ts.Active, err)
		}
	}
	_, err = s.GetClient(ctx, "cli_b")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.GetLink(ctx, l.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = s.GetTokenSession(ctx, store.KindAccessToken, "sig1")
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, s.DeleteClient(ctx, "cli_b"), store.ErrNotFound)
	if _, err := s.GetClient(ctx, "cli_a"); err != nil {
		t.Errorf("other client affected: %v", err)
	}
}

func testLinks(t *testing.T, s store.Store) {
	a := newAccount(t, s, "l@example.com")
	newClient(t, s, "cli_1")
	newClient(t, s, "cli_2")
	l1, err := s.UpsertLink(ctx, a.ID, "cli_1", []string{"openid"}, t0)
	must(t, err)
	if l1.Status != store.LinkActive || l1.RevokedAt != nil || !slices.Equal(l1.Scopes, []string{"openid"}) {
		t.Errorf("UpsertLink = %+v", l1)
	}
	sameInstant(t, "CreatedAt", l1.CreatedAt, t0)
	l1b, err := s.UpsertLink(ctx, a.ID, "cli_1", []string{"openid", "bookings:read"}, t0.Add(time.Hour))
	must(t, err)
	if l1b.ID != l1.ID || len(l1b.Scopes) != 2 {
		t.Errorf("second UpsertLink = %+v, want same id %s with 2 scopes", l1b, l1.ID)
	}
	got, err := s.GetActiveLink(ctx, a.ID, "cli_1")
	must(t, err)
	if got.ID != l1.ID || len(got.Scopes) != 2 {
		t.Errorf("GetActiveLink = %+v", got)
	}
	sameInstant(t, "CreatedAt kept", got.CreatedAt, t0)
	_, err = s.GetActiveLink(ctx, a.ID, "cli_2")
	wantErr(t, err, store.ErrNotFound)
	l2, err := s.UpsertLink(ctx, a.ID, "cli_2", nil, t0.Add(2*time.Hour))
	must(t, err)

	// TouchLink: a link's first use is written at once (it was "not used
	// yet"), then uses are coalesced within a minute and written after;
	// never backwards.
	must(t, s.TouchLink(ctx, l2.ID, t0.Add(2*time.Hour-time.Second)))
	got, _ = s.GetLink(ctx, l2.ID)
	sameInstant(t, "LastUsedAt (not before the link)", got.LastUsedAt, t0.Add(2*time.Hour))
	must(t, s.TouchLink(ctx, l2.ID, t0.Add(2*time.Hour+10*time.Second)))
	got, _ = s.GetLink(ctx, l2.ID)
	sameInstant(t, "LastUsedAt (first use)", got.LastUsedAt, t0.Add(2*time.Hour+10*time.Second))
	must(t, s.TouchLink(ctx, l2.ID, t0.Add(2*time.Hour+30*time.Second)))
	got, _ = s.GetLink(ctx, l2.ID)
	sameInstant(t, "LastUsedAt (coalesced)", got.LastUsedAt, t0.Add(2*time.Hour+10*time.Second))
	must(t, s.TouchLink(ctx, l2.ID, t0.Add(3*time.Hour)))
	got, _ = s.GetLink(ctx, l2.ID)
	sameInstant(t, "LastUsedAt", got.LastUsedAt, t0.Add(3*time.Hour))

	// Revoke deactivates the link's token sessions only.
	tok := func(sig, link string) store.TokenSession {
		return store.TokenSession{Kind: store.KindRefreshToken, SignatureHash: sig, RequestID: "req_" + sig, ClientID: "cli_1",
			AccountID: a.ID, LinkID: link, Active: true, Request: []byte("{}"), ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}
	}
	must(t, s.CreateTokenSession(ctx, tok("s1", l1.ID)))
	must(t, s.CreateTokenSession(ctx, tok("s2", l1.ID)))
	must(t, s.CreateTokenSession(ctx, tok("s3", l2.ID)))
	must(t, s.RevokeLink(ctx, l1.ID, t0.Add(4*time.Hour)))
	got, err = s.GetLink(ctx, l1.ID)
	must(t, err)
	if got.Status != store.LinkRevoked || got.RevokedAt == nil {
		t.Fatalf("revoked link = %+v", got)
	}
	sameInstant(t, "RevokedAt", *got.RevokedAt, t0.Add(4*time.Hour))
	for sig, want := range map[string]bool{"s1": false, "s2": false, "s3": true} {
		ts, err := s.GetTokenSession(ctx, store.KindRefreshToken, sig)
		must(t, err)
		if ts.Active != want {
			t.Errorf("token %s active = %v, want %v", sig, ts.Active, want)
		}
	}
	_, err = s.GetActiveLink(ctx, a.ID, "cli_1")
	wantErr(t, err, store.ErrNotFound)

	// GetClientLink: the client and the active link, in one read.
	wantClient, err := s.GetClient(ctx, "cli_2")
	must(t, err)
	c, l, err := s.GetClientLink(ctx, "cli_2", a.ID)
	must(t, err)
	wantLink, err := s.GetActiveLink(ctx, a.ID, "cli_2")
	must(t, err)
	if !reflect.DeepEqual(c, wantClient) || l == nil || !reflect.DeepEqual(*l, wantLink) {
		t.Errorf("GetClientLink = %+v, %+v; want %+v, %+v", c, l, wantClient, wantLink)
	}
	for _, tc := range []struct{ client, account string }{
		{"cli_1", a.ID}, // revoked link
		{"cli_2", ""},   // nobody signed in
		{"cli_2", "acc_other"},
	} {
		c, l, err := s.GetClientLink(ctx, tc.client, tc.account)
		must(t, err)
		if c.ID != tc.client || l != nil {
			t.Errorf("GetClientLink(%s, %q) = %+v, %+v; want the client and no link", tc.client, tc.account, c, l)
		}
	}
	_, l, err = s.GetClientLink(ctx, "cli_missing", a.ID)
	wantErr(t, err, store.ErrNotFound)
	if l != nil {
		t.Errorf("GetClientLink of a missing client: link %+v", l)
	}
	wantErr(t, s.RevokeLink(ctx, "lnk_missing", t0), store.ErrNotFound)
	// Revoking again is harmless and keeps the first revocation time.
	must(t, s.RevokeLink(ctx, l1.ID, t0.Add(9*time.Hour)))
	if got, _ := s.GetLink(ctx, l1.ID); got.RevokedAt == nil || !got.RevokedAt.Equal(store.UTC(t0.Add(4*time.Hour))) {
		t.Errorf("second RevokeLink changed RevokedAt to %v", got.RevokedAt)
	}

	// Reconnecting after a revoke makes a new link.
	l3, err := s.UpsertLink(ctx, a.ID, "cli_1", []string{"openid"}, t0.Add(5*time.Hour))
	must(t, err)
	if l3.ID == l1.ID {
		t.Error("UpsertLink after revoke reused the revoked link")
	}
	list, err := s.ListAccountLinks(ctx, a.ID)
	must(t, err)
	var ids []string
	for _, l := range list {
		ids = append(ids, l.ID)
	}
	if !slices.Equal(ids, []string{l3.ID, l2.ID, l1.ID}) {
		t.Errorf("ListAccountLinks = %v, want newest first [%s %s %s]", ids, l3.ID, l2.ID, l1.ID)
	}
	_, err = s.GetLink(ctx, "lnk_missing")
	wantErr(t, err, store.ErrNotFound)

	// First connections racing: all succeed, with one link.
	b := newAccount(t, s, "race@example.com")
	links := make([]store.Link, 10)
	errs := parallel(len(links), func(i int) error {
		var err error
		links[i], err = s.UpsertLink(ctx, b.ID, "cli_2", []string{"openid"}, t0)
		return err
	})
	if ok := count(errs, nil); ok != len(errs) {
		t.Fatalf("concurrent UpsertLink: %d of %d succeeded: %v", ok, len(errs), others(errs, nil))
	}
	for _, l := range links {
		if l.ID != links[0].ID {
			t.Fatalf("concurrent UpsertLink made links %s and %s", links[0].ID, l.ID)
		}
	}
}

func testTokens(t *testing.T, s store.Store) {
	mk := func(kind store.TokenKind, sig, req string, exp time.Time) store.TokenSession {
		return store.TokenSession{Kind: kind, SignatureHash: sig, RequestID: req, ClientID: "cli", AccountID: "acc", LinkID: "lnk",
			Active: true, Request: []byte(`{"a":1}`), ExpiresAt: exp, CreatedAt: t0}
	}
	must(t, s.CreateTokenSession(ctx, mk(store.KindAuthorizeCode, "code1", "R", t0.Add(time.Minute))))
	must(t, s.CreateTokenSession(ctx, mk(store.KindAccessToken, "at1", "R", t0.Add(time.Hour))))
	must(t, s.CreateTokenSession(ctx, mk(store.KindRefreshToken, "rt1", "R", t0.Add(48*time.Hour))))
	must(t, s.CreateTokenSession(ctx, mk(store.KindAccessToken, "at2", "Q", t0.Add(time.Hour))))
	// Same signature under another kind is a different session.
	must(t, s.CreateTokenSession(ctx, mk(store.KindPKCE, "code1", "R", t0.Add(time.Minute))))
	wantErr(t, s.CreateTokenSession(ctx, mk(store.KindAccessToken, "at1", "R", t0)), store.ErrAlreadyExists)
	got, err := s.GetTokenSession(ctx, store.KindAccessToken, "at1")
	must(t, err)
	if got.RequestID != "R" || got.ClientID != "cli" || got.AccountID != "acc" || got.LinkID != "lnk" || !got.Active || string(got.Request) != `{"a":1}` {
		t.Errorf("GetTokenSession = %+v", got)
	}
	sameInstant(t, "ExpiresAt", got.ExpiresAt, t0.Add(time.Hour))
	_, err = s.GetTokenSession(ctx, store.KindRefreshToken, "at1")
	wantErr(t, err, store.ErrNotFound)

	must(t, s.DeactivateTokenSession(ctx, store.KindAuthorizeCode, "code1"))
	wantErr(t, s.DeactivateTokenSession(ctx, store.KindAuthorizeCode, "code1"), store.ErrConflict)
	wantErr(t, s.DeactivateTokenSession(ctx, store.KindAuthorizeCode, "nope"), store.ErrNotFound)
	if got, _ := s.GetTokenSession(ctx, store.KindAuthorizeCode, "code1"); got.Active {
		t.Error("code still active after DeactivateTokenSession")
	}
	if got, _ := s.GetTokenSession(ctx, store.KindPKCE, "code1"); !got.Active {
		t.Error("DeactivateTokenSession touched another kind")
	}

	must(t, s.DeactivateRequest(ctx, store.KindAccessToken, "R"))
	active := func(kind store.TokenKind, sig string) bool {
		t.Helper()
		ts, err := s.GetTokenSession(ctx, kind, sig)
		must(t, err)
		return ts.Active
	}
	if active(store.KindAccessToken, "at1") || !active(store.KindRefreshToken, "rt1") || !active(store.KindAccessToken, "at2") {
		t.Error("DeactivateRequest(access, R) deactivated the wrong sessions")
	}
	must(t, s.DeactivateRequest(ctx, "", "R"))
	if active(store.KindRefreshToken, "rt1") || active(store.KindPKCE, "code1") || !active(store.KindAccessToken, "at2") {
		t.Error("DeactivateRequest(all, R) deactivated the wrong sessions")
	}
	must(t, s.DeactivateRequest(ctx, "", "unknown"))

	must(t, s.DeleteTokenSession(ctx, store.KindAccessToken, "at2"))
	wantErr(t, s.DeleteTokenSession(ctx, store.KindAccessToken, "at2"), store.ErrNotFound)

	n, err := s.PurgeTokenSessions(ctx, t0.Add(2*time.Hour))
	must(t, err)
	if n != 3 { // code1, pkce code1, at1
		t.Errorf("PurgeTokenSessions = %d, want 3", n)
	}
	if _, err := s.GetTokenSession(ctx, store.KindRefreshToken, "rt1"); err != nil {
		t.Errorf("unexpired session purged: %v", err)
	}
}

func testTokensConcurrent(t *testing.T, s store.Store) {
	must(t, s.CreateTokenSession(ctx, store.TokenSession{Kind: store.KindRefreshToken, SignatureHash: "race", RequestID: "R",
		ClientID: "c", Active: true, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}))
	errs := parallel(20, func(int) error { return s.DeactivateTokenSession(ctx, store.KindRefreshToken, "race") })
	ok, conflict := count(errs, nil), count(errs, store.ErrConflict)
	if ok != 1 || conflict != len(errs)-1 {
		t.Fatalf("concurrent DeactivateTokenSession: %d nil, %d ErrConflict, others %v", ok, conflict, others(errs, store.ErrConflict))
	}
}

// parallel runs fn n times at once, released together, and returns the errors.
func parallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

func count(errs []error, target error) int {
	n := 0
	for _, e := range errs {
		if (target == nil && e == nil) || (target != nil && errors.Is(e, target)) {
			n++
		}
	}
	return n
}

func others(errs []error, expected error) []error {
	var out []error
	for _, e := range errs {
		if e != nil && !errors.Is(e, expected) {
			out = append(out, e)
		}
	}
	return out
}

func testKeys(t *testing.T, s store.Store) {
	for i, id := range []string{"k1", "k2", "k3"} {
		must(t, s.CreateSigningKey(ctx, store.SigningKey{ID: id, Purpose: store.KeyPurposeToken, Algorithm: "ES256",
			PrivateEncrypted: []byte("enc" + id), PublicJWK: []byte(`{"kid":"` + id + `"}`), CreatedAt: t0.Add(time.Duration(i) * time.Hour)}))
	}
	must(t, s.CreateSigningKey(ctx, store.SigningKey{ID: "g1", Purpose: store.KeyPurposeGrant, Algorithm: "ES256",
		PrivateEncrypted: []byte("x"), PublicJWK: []byte("{}"), CreatedAt: t0}))
	wantErr(t, s.CreateSigningKey(ctx, store.SigningKey{ID: "k1", Purpose: store.KeyPurposeToken, Algorithm: "ES256",
		PrivateEncrypted: []byte("x"), PublicJWK: []byte("{}"), CreatedAt: t0}), store.ErrAlreadyExists)
	keys, err := s.ListSigningKeys(ctx, store.KeyPurposeToken)
	must(t, err)
	if len(keys) != 3 || keys[0].ID != "k3" || keys[2].ID != "k1" {
		t.Fatalf("ListSigningKeys = %+v, want k3 k2 k1", keys)
	}
	if string(keys[0].PrivateEncrypted) != "enck3" || string(keys[0].PublicJWK) != `{"kid":"k3"}` || keys[0].Algorithm != "ES256" || keys[0].RetiredAt != nil {
		t.Errorf("key = %+v", keys[0])
	}
	must(t, s.RetireSigningKey(ctx, "k2", t0.Add(10*time.Hour)))
	keys, _ = s.ListSigningKeys(ctx, store.KeyPurposeToken)
	if keys[1].RetiredAt == nil {
		t.Fatal("retired key has no RetiredAt")
	}
	sameInstant(t, "RetiredAt", *keys[1].RetiredAt, t0.Add(10*time.Hour))
	wantErr(t, s.RetireSigningKey(ctx, "missing", t0), store.ErrNotFound)
	must(t, s.DeleteSigningKey(ctx, "k1"))
	wantErr(t, s.DeleteSigningKey(ctx, "k1"), store.ErrNotFound)
	keys, _ = s.ListSigningKeys(ctx, store.KeyPurposeToken)
	if len(keys) != 2 {
		t.Errorf("after delete %d keys, want 2", len(keys))
	}
	grant, _ := s.ListSigningKeys(ctx, store.KeyPurposeGrant)
	if len(grant) != 1 || grant[0].ID != "g1" {
		t.Errorf("grant keys = %+v", grant)
	}
}
