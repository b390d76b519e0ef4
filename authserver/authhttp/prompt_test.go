package authhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/internal/endpoint"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestPromptAndMaxAge pins what the authorize endpoint answers for each
// prompt and max_age (docs/prompt-and-max-age.md), for a person who signed
// in at a given time (the test UI's testAuthTime cookie): the sign-in page
// again, the consent page, a code, or an error redirected with state and
// iss.
func TestPromptAndMaxAge(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	s256 := oauth2.S256ChallengeOption(oauth2.GenerateVerifier())
	c := e.oauth(publicID, "", "openid")
	e.code(c, e.account.ID, s256) // consent remembered from here on
	now := e.now().Truncate(time.Second)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }

	// visit sends the authorization request as the person signed in at
	// authTime (zero: signed out).
	visit := func(authURL string, authTime time.Time) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, authURL, nil)
		if authTime.IsZero() {
			return e.do(req, "")
		}
		req.AddCookie(&http.Cookie{Name: testAuthTime, Value: strconv.FormatInt(authTime.Unix(), 10)})
		return e.do(req, e.account.ID)
	}
	authURL := func(kv ...string) string {
		opts := []oauth2.AuthCodeOption{s256}
		for i := 0; i+1 < len(kv); i += 2 {
			opts = append(opts, oauth2.SetAuthURLParam(kv[i], kv[i+1]))
		}
		return c.AuthCodeURL("state-1234567890", opts...)
	}
	// Outcomes: "reauth" (the sign-in page for a signed-in person),
	// "login" (the sign-in page), "consent", "code", or an error code.
	outcome := func(resp *http.Response) (string, *url.URL) {
		t.Helper()
		resp.Body.Close()
		if resp.Header.Get("X-Test-Page") == "consent" {
			return "consent", nil
		}
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || loc.String() == "" {
			t.Fatalf("status %d without a redirect", resp.StatusCode)
		}
		if loc.Path == "/login" {
			next, err := url.Parse(loc.Query().Get("next"))
			if err != nil || next.Path != endpoint.PathAuthorize {
				t.Fatalf("sign-in without the authorize URL to come back to: %s", loc)
			}
			if loc.Query().Get("reauth") == "1" {
				return "reauth", next
			}
			return "login", next
		}
		q := loc.Query()
		if q.Get("state") != "state-1234567890" || q.Get("iss") != e.issuer {
			t.Fatalf("redirect to the client without state and iss: %s", loc)
		}
		if q.Get("code") != "" {
			return "code", loc
		}
		return q.Get("error"), loc
	}

	for _, tc := range []struct {
		name     string
		params   []string
		authTime time.Time
		want     string
	}{
		{"no prompt, remembered consent", nil, ago(time.Hour), "code"},
		{"prompt=login signed in", []string{"prompt", "login"}, ago(time.Second), "reauth"},
		{"prompt=login signed out", []string{"prompt", "login"}, time.Time{}, "login"},
		{"prompt=consent remembered", []string{"prompt", "consent"}, ago(time.Hour), "consent"},
		{"prompt=select_account shows the account on the consent page", []string{"prompt", "select_account"}, ago(time.Hour), "consent"},
		{"prompt=login consent", []string{"prompt", "login consent"}, ago(time.Hour), "reauth"},
		{"prompt=none remembered", []string{"prompt", "none"}, ago(time.Hour), "code"},
		{"prompt=none signed out", []string{"prompt", "none"}, time.Time{}, "login_required"},
		{"prompt=none login", []string{"prompt", "none login"}, ago(time.Hour), "invalid_request"},
		{"prompt=none consent, signed out", []string{"prompt", "consent none"}, time.Time{}, "invalid_request"},
		{"unknown prompt value", []string{"prompt", "create"}, ago(time.Hour), "invalid_request"},
		{"max_age older than the sign-in", []string{"max_age", "60"}, ago(2 * time.Minute), "reauth"},
		{"max_age within the sign-in", []string{"max_age", "60"}, ago(30 * time.Second), "code"},
		{"max_age=0 always signs in again", []string{"max_age", "0"}, now, "reauth"},
		{"max_age signed out", []string{"max_age", "60"}, time.Time{}, "login"},
		{"prompt=none with max_age older than the sign-in", []string{"prompt", "none", "max_age", "60"}, ago(2 * time.Minute), "login_required"},
		{"prompt=none with max_age within the sign-in", []string{"prompt", "none", "max_age", "60"}, ago(30 * time.Second), "code"},
		{"negative max_age", []string{"max_age", "-1"}, ago(time.Hour), "invalid_request"},
		{"max_age not a number", []string{"max_age", "1h"}, ago(time.Hour), "invalid_request"},
		{"sign-in marker in the future", []string{"prompt", "login", endpoint.FieldAuthAfter, strconv.FormatInt(now.Add(time.Hour).Unix(), 10)}, now, "invalid_request"},
		{"sign-in marker over an hour old", []string{"prompt", "login", endpoint.FieldAuthAfter, strconv.FormatInt(ago(61*time.Minute).Unix(), 10)}, ago(time.Minute), "reauth"},
		{"sign-in marker not a number", []string{"prompt", "login", endpoint.FieldAuthAfter, "soon"}, now, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, loc := outcome(visit(authURL(tc.params...), tc.authTime)); got != tc.want {
				t.Fatalf("got %s (%v), want %s", got, loc, tc.want)
			}
		})
	}

	t.Run("repeated prompt", func(t *testing.T) {
		if got, loc := outcome(visit(authURL("prompt", "login")+"&prompt=consent", ago(time.Hour))); got != "invalid_request" {
			t.Fatalf("got %s (%v)", got, loc)
		}
	})

	// After the sign-in page the flow goes on: the URL it comes back to
	// carries the marker; a sign-in at or after it is enough, one before
	// it (the same old session) is asked again, and the consent form
	// re-posts the marker.
	for _, params := range [][]string{{"prompt", "login"}, {"max_age", "0"}, {"max_age", "60"}} {
		t.Run("after signing in again, "+strings.Join(params, "="), func(t *testing.T) {
			got, next := outcome(visit(authURL(params...), ago(time.Hour)))
			if got != "reauth" {
				t.Fatalf("first visit: %s", got)
			}
			after, err := strconv.ParseInt(next.Query().Get(endpoint.FieldAuthAfter), 10, 64)
			if err != nil || after < now.Unix() || after > e.now().Unix() {
				t.Fatalf("the sign-in comes back to %s, want %s=now", next, endpoint.FieldAuthAfter)
			}
			back := e.issuer + next.String()
			if got, _ := outcome(visit(back, ago(time.Hour))); got != "reauth" {
				t.Fatalf("back with the old sign-in: %s, want the sign-in page again", got)
			}
			if got, loc := outcome(visit(back, time.Unix(after, 0))); got != "code" {
				t.Fatalf("back after signing in: %s (%v), want the code", got, loc)
			}
			q := next.Query()
			q.Set("prompt", strings.TrimSpace(q.Get("prompt")+" consent"))
			resp := visit(e.issuer+next.Path+"?"+q.Encode(), time.Unix(after, 0))
			if resp.Header.Get("X-Test-Page") != "consent" {
				t.Fatalf("prompt=consent after signing in: no consent page")
			}
			var v consent.ConsentView
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if v.Params.Get(endpoint.FieldAuthAfter) == "" {
				t.Fatalf("the consent form does not re-post %s: %v", endpoint.FieldAuthAfter, v.Params)
			}
			form := v.Params
			form.Set("decision", "allow")
			form.Set(consent.CSRFField, v.CSRFToken)
			req, _ := http.NewRequest(http.MethodPost, e.issuer+v.Action, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: testAuthTime, Value: strconv.FormatInt(after, 10)})
			if got, loc := outcome(e.do(req, e.account.ID)); got != "code" {
				t.Fatalf("Allow after signing in: %s (%v), want the code", got, loc)
			}
		})
	}
}

// TestIDTokenAuthTime: the ID token's auth_time is when the person signed
// in, not when the code was issued, and rat when the request was made;
// go-oidc verifies the token, from the code and from a refresh.
func TestIDTokenAuthTime(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	c := e.oauth(publicID, "", "openid")
	e.code(c, e.account.ID, oauth2.S256ChallengeOption(verifier))
	signedIn := e.now().Add(-90 * time.Minute).Truncate(time.Second)
	req, _ := http.NewRequest(http.MethodGet, c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("max_age", "7200")), nil)
	req.AddCookie(&http.Cookie{Name: testAuthTime, Value: strconv.FormatInt(signedIn.Unix(), 10)})
	resp := e.do(req, e.account.ID)
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Query().Get("code") == "" {
		t.Fatalf("no code: %s", loc)
	}
	tok, err := c.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	p, err := oidc.NewProvider(ctx, e.issuer)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, tok *oauth2.Token) {
		t.Helper()
		raw, _ := tok.Extra("id_token").(string)
		idt, err := p.Verifier(&oidc.Config{ClientID: publicID}).Verify(ctx, raw)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var claims struct {
			AuthTime int64 `json:"auth_time"`
			RAT      int64 `json:"rat"`
		}
		if err := idt.Claims(&claims); err != nil {
			t.Fatal(err)
		}
		if claims.AuthTime != signedIn.Unix() {
			t.Errorf("%s: auth_time %d, want the sign-in %d", what, claims.AuthTime, signedIn.Unix())
		}
		if claims.RAT < signedIn.Unix() || claims.RAT > e.now().Unix() {
			t.Errorf("%s: rat %d, want the request's time", what, claims.RAT)
		}
	}
	check("code", tok)
	tok.Expiry = time.Now().Add(-time.Hour)
	refreshed, err := c.TokenSource(ctx, tok).Token()
	if err != nil {
		t.Fatal(err)
	}
	check("refresh", refreshed)
}

// TestRedirectedErrorsCarryIss: every authorize error sent back to the
// client — fosite's, PKCE's, the resource's, prompt's and the person's
// refusal — carries state and iss (RFC 9207).
func TestRedirectedErrorsCarryIss(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	s256 := oauth2.S256ChallengeOption(oauth2.GenerateVerifier())
	c := e.oauth(publicID, "", "openid")
	param := oauth2.SetAuthURLParam
	for _, tc := range []struct {
		name, authURL, want string
	}{
		{"scope beyond the client's", e.oauth(publicID, "", "openid", "admin").AuthCodeURL("state-1234567890", s256), "invalid_scope"},
		{"response type", c.AuthCodeURL("state-1234567890", s256, param("response_type", "token")), "unsupported_response_type"},
		{"no PKCE", c.AuthCodeURL("state-1234567890"), "invalid_request"},
		{"plain PKCE", c.AuthCodeURL("state-1234567890", param("code_challenge", strings.Repeat("a", 43)), param("code_challenge_method", "plain")), "invalid_request"},
		{"unknown resource", c.AuthCodeURL("state-1234567890", s256, param("resource", "https://other.example/mcp")), "invalid_target"},
		{"unknown prompt", c.AuthCodeURL("state-1234567890", s256, param("prompt", "create")), "invalid_request"},
		{"prompt=none login", c.AuthCodeURL("state-1234567890", s256, param("prompt", "none login")), "invalid_request"},
		{"bad max_age", c.AuthCodeURL("state-1234567890", s256, param("max_age", "soon")), "invalid_request"},
		{"prompt=none without consent", e.oauth(otherID, "", "openid").AuthCodeURL("state-1234567890", s256, param("prompt", "none")), "consent_required"},
	} {
		t.Run(tc.name, func(t *testing.T) { expectRedirectError(t, e, tc.authURL, tc.want) })
	}
	t.Run("prompt=none signed out", func(t *testing.T) {
		resp := e.get(c.AuthCodeURL("state-1234567890", s256, param("prompt", "none")), "")
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if q := loc.Query(); q.Get("error") != "login_required" || q.Get("state") != "state-1234567890" || q.Get("iss") != e.issuer {
			t.Fatalf("got %s, want login_required with state and iss", loc)
		}
	})
	t.Run("deny", func(t *testing.T) {
		u := e.authorize(e.oauth(otherID, "", "openid").AuthCodeURL("state-1234567890", s256), e.account2.ID, "deny")
		if q := u.Query(); q.Get("error") != "access_denied" || q.Get("state") != "state-1234567890" || q.Get("iss") != e.issuer {
			t.Fatalf("got %s, want access_denied with state and iss", u)
		}
	})
}
