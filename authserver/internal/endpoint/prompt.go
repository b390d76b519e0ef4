package endpoint

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PromptValues are the prompt values the authorize endpoint accepts
// (OpenID Connect Core §3.1.2.1), advertised as prompt_values_supported.
var PromptValues = []string{"none", "login", "consent", "select_account"}

// FieldAuthAfter is the authorize parameter the endpoint adds when it
// sends a person to sign in for prompt=login or max_age: the Unix second
// from which a sign-in counts. The sign-in page comes back to the same
// authorize URL, still with prompt=login (or max_age=0), and the consent
// form re-posts every parameter; a sign-in at or after that second
// satisfies the request, so the flow goes on instead of asking again.
// A value in the future, which no sign-in could meet, is refused; one
// older than authAfterLifetime is ignored (the person is asked again), so
// a client or a bookmark that carries one waives prompt=login for an hour
// at most, and only for a sign-in made since.
const FieldAuthAfter = "linkslot_auth_after"

// authAfterLifetime is how long FieldAuthAfter counts: time enough to
// sign in, reset a password or read the consent page.
const authAfterLifetime = time.Hour

// authAsk is what an authorization request asks of the person
// (docs/prompt-and-max-age.md).
type authAsk struct {
	none    bool // prompt=none: no page at all
	login   bool // prompt=login or max_age=0: a fresh sign-in
	consent bool // prompt=consent or select_account: the consent page
	// maxAge is max_age in seconds, -1 when absent.
	maxAge int64
	// after is FieldAuthAfter, zero when absent.
	after time.Time
}

// maxAuthAfterSkew is how far FieldAuthAfter may lie ahead of the clock
// (replicas' clocks differ by a little).
const maxAuthAfterSkew = 5 * time.Second

// parseAuthAsk reads prompt, max_age and FieldAuthAfter; a malformed one
// is an invalid_request that says what to send instead.
func parseAuthAsk(form url.Values, now time.Time) (authAsk, *oauthError) {
	ask := authAsk{maxAge: -1}
	for _, k := range []string{"prompt", "max_age", FieldAuthAfter} {
		if len(form[k]) > 1 {
			return ask, invalidRequest("Send " + k + " at most once.")
		}
	}
	prompts := strings.Fields(form.Get("prompt"))
	for _, p := range prompts {
		if !slices.Contains(PromptValues, p) {
			return ask, invalidRequest("The prompt value " + strconv.Quote(p) + " is not supported; use none, login, consent or select_account.")
		}
	}
	ask.none = slices.Contains(prompts, "none")
	if ask.none && len(prompts) > 1 {
		return ask, invalidRequest("prompt=none cannot be combined with other prompt values.")
	}
	ask.login = slices.Contains(prompts, "login")
	ask.consent = slices.Contains(prompts, "consent") || slices.Contains(prompts, "select_account")
	if v := form.Get("max_age"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return ask, invalidRequest("max_age must be a whole number of seconds, 0 or more.")
		}
		ask.maxAge = n
		// OpenID Connect Core §3.1.2.1: max_age=0 is prompt=login.
		ask.login = ask.login || n == 0
	}
	if v := form.Get(FieldAuthAfter); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || time.Unix(n, 0).After(now.Add(maxAuthAfterSkew)) {
			return ask, invalidRequest("The authorization request was altered (" + FieldAuthAfter + "); start again from the app.")
		}
		if after := time.Unix(n, 0).UTC(); now.Sub(after) <= authAfterLifetime {
			ask.after = after
		}
	}
	return ask, nil
}

func invalidRequest(desc string) *oauthError {
	return &oauthError{"invalid_request", desc, http.StatusBadRequest}
}

// needsSignIn reports whether a person who authenticated at authTime must
// sign in again, to the second: after the endpoint asked for a sign-in
// (after set), one at or after that second does; otherwise prompt=login
// (max_age=0) always asks, and max_age asks once more than max_age
// seconds have passed.
func (a authAsk) needsSignIn(authTime, now time.Time) bool {
	if !a.after.IsZero() {
		return authTime.Unix() < a.after.Unix()
	}
	return a.login || a.maxAge >= 0 && now.Unix()-authTime.Unix() > a.maxAge
}

// asksSignIn reports whether the request asks anything of the person's
// authentication: the sign-in it leads to then carries FieldAuthAfter.
func (a authAsk) asksSignIn() bool { return a.login || a.maxAge >= 0 }

// requestedAt is the time the request was made, as fosite's OpenID
// Connect validator reads it: when the endpoint asked for a sign-in, or
// now.
func (a authAsk) requestedAt(now time.Time) time.Time {
	if !a.after.IsZero() {
		return a.after
	}
	return now.UTC().Truncate(time.Second)
}

// signInNext is the authorize URL a sign-in comes back to: the request's
// parameters, with FieldAuthAfter set to now when the request asks about
// the authentication.
func (a authAsk) signInNext(form url.Values, now time.Time) string {
	q := url.Values{}
	for k, v := range form {
		q[k] = slices.Clone(v)
	}
	if a.asksSignIn() {
		q.Set(FieldAuthAfter, strconv.FormatInt(now.Unix(), 10))
	}
	return PathAuthorize + "?" + q.Encode()
}
