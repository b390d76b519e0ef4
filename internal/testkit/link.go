package testkit

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// HiddenFields returns the hidden inputs of an HTML page (names and values
// HTML-unescaped), as the pages' forms would submit them.
func HiddenFields(body string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		v.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

// NewBrowser returns a person's browser: a client with its own cookie jar
// that follows redirects except the one to redirectURL (matched on host and
// path), whose response is returned so the code can be read from Location.
// base nil means http.DefaultTransport; timeout 0 means none.
func NewBrowser(redirectURL string, base http.RoundTripper, timeout time.Duration) *http.Client {
	jar, _ := cookiejar.New(nil)
	stop, _ := url.Parse(redirectURL)
	return &http.Client{Jar: jar, Transport: base, Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if stop != nil && req.URL.Host == stop.Host && req.URL.Path == stop.Path {
				return http.ErrUseLastResponse
			}
			return nil
		}}
}

// LinkRequest is one linking through the real pages.
type LinkRequest struct {
	// OAuth is the client: ClientID, RedirectURL, Scopes, Endpoint
	// (AuthURL is where the consent form is posted too).
	OAuth *oauth2.Config
	// Browser carries the person's cookies and must not follow the redirect
	// to OAuth.RedirectURL (see NewBrowser). Nil means a new NewBrowser.
	Browser *http.Client
	// HTTP makes the token request; nil means http.DefaultClient.
	HTTP *http.Client
	// Email and Password fill the sign-in form when it is shown (a browser
	// already signed in goes straight to consent).
	Email, Password string
	// State is the authorization request's state; "" means a random one.
	State string
	// Resource, when set, is sent as the RFC 8707 resource indicator on
	// both the authorization and the token request.
	Resource string
}

// LinkThroughPages runs the authorization code flow with PKCE S256 through
// the real pages: authorize → sign-in form (if shown) → consent form with
// decision "allow" (if shown; remembered consent redirects at once) →
// redirect with the code → token exchange. Errors never include the code or
// a token.
func LinkThroughPages(ctx context.Context, r LinkRequest) (*oauth2.Token, error) {
	if r.OAuth == nil {
		return nil, errors.New("testkit: LinkRequest without OAuth config")
	}
	browser := r.Browser
	if browser == nil {
		browser = NewBrowser(r.OAuth.RedirectURL, nil, 0)
	}
	state := r.State
	if state == "" {
		state = "state-" + oauth2.GenerateVerifier()[:16]
	}
	verifier := oauth2.GenerateVerifier()
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if r.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", r.Resource))
	}
	authURL, err := url.Parse(r.OAuth.Endpoint.AuthURL)
	if err != nil {
		return nil, fmt.Errorf("auth URL: %w", err)
	}
	get := func(u string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		return browser.Do(req)
	}
	post := func(u string, form url.Values) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return browser.Do(req)
	}

	resp, err := get(r.OAuth.AuthCodeURL(state, opts...))
	if err != nil {
		return nil, fmt.Errorf("authorize: %w", err)
	}
	body := readBody(resp)
	if resp.Request.URL.Path == "/login" {
		form := HiddenFields(body)
		form.Set("email", r.Email)
		form.Set("password", r.Password)
		login := url.URL{Scheme: resp.Request.URL.Scheme, Host: resp.Request.URL.Host, Path: "/login"}
		// A 503 (every password-hashing slot busy) says when to try
		// again; a person would, so the agent's browser does too.
		for attempt := 0; ; attempt++ {
			if resp, err = post(login.String(), form); err != nil {
				return nil, fmt.Errorf("sign in: %w", err)
			}
			body = readBody(resp)
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if resp.StatusCode != http.StatusServiceUnavailable || wait <= 0 || attempt == 9 {
				break
			}
			select {
			case <-time.After(time.Duration(wait) * time.Second):
			case <-ctx.Done():
				return nil, fmt.Errorf("sign in: %w", ctx.Err())
			}
			form = HiddenFields(body)
			form.Set("email", r.Email)
			form.Set("password", r.Password)
		}
	}
	if resp.StatusCode == http.StatusOK && resp.Request.URL.Path == authURL.Path {
		form := HiddenFields(body)
		form.Set("decision", "allow")
		if resp, err = post(r.OAuth.Endpoint.AuthURL, form); err != nil {
			return nil, fmt.Errorf("consent: %w", err)
		}
		readBody(resp)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode/100 != 3 || loc == nil || loc.Query().Get("code") == "" {
		where := ""
		if loc != nil {
			where = loc.Query().Get("error")
		}
		return nil, fmt.Errorf("authorize ended with %d at %s (error %q): %.300s", resp.StatusCode, resp.Request.URL.Path, where, body)
	}
	if r.HTTP != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, r.HTTP)
	}
	xopts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}
	if r.Resource != "" {
		xopts = append(xopts, oauth2.SetAuthURLParam("resource", r.Resource))
	}
	tok, err := r.OAuth.Exchange(ctx, loc.Query().Get("code"), xopts...)
	if err != nil {
		return nil, fmt.Errorf("exchange: %w", err)
	}
	return tok, nil
}

func readBody(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return string(b)
}
