package consentui_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestCalendarFeedOnAccountPage: a person turns their private calendar feed
// on from the account page, sees its address, replaces it (the old one
// stops working), and turns it off.
func TestCalendarFeedOnAccountPage(t *testing.T) {
	e := newEnv(t, envOpts{issuer: "http://127.0.0.1:8080"})
	c := e.client()
	c.signUpAndIn("cal@example.com", testPassword)
	if r := c.get("/account"); r.status != 200 || !strings.Contains(r.body, "Turn on the calendar feed") {
		t.Fatalf("account page: %d\n%s", r.status, r.body)
	}
	feedRE := regexp.MustCompile(`http://127\.0\.0\.1:8080/calendar/[A-Za-z0-9_.-]+\.ics`)
	r := c.post("/account", "/account/calendar", url.Values{"action": {"on"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("turn on: %d", r.status)
	}
	page := c.get(r.header.Get("Location"))
	first := feedRE.FindString(page.body)
	if first == "" || !strings.Contains(page.body, "Your calendar feed is on") {
		t.Fatalf("no feed address after turning it on:\n%s", page.body)
	}
	c.post("/account", "/account/calendar", url.Values{"action": {"replace"}})
	second := feedRE.FindString(c.get("/account").body)
	if second == "" || second == first {
		t.Fatalf("replace: %q then %q", first, second)
	}
	c.post("/account", "/account/calendar", url.Values{"action": {"off"}})
	if page := c.get("/account"); feedRE.MatchString(page.body) || !strings.Contains(page.body, "Turn on the calendar feed") {
		t.Fatalf("feed still shown after turning it off:\n%s", page.body)
	}
	if r := c.do(http.MethodPost, "/account/calendar", url.Values{"action": {"on"}}); r.status != http.StatusForbidden && r.status != http.StatusBadRequest {
		t.Fatalf("POST without a CSRF token: %d", r.status)
	}
	if r := c.post("/account", "/account/calendar", url.Values{"action": {"explode"}}); r.status != http.StatusBadRequest {
		t.Fatalf("unknown action: %d", r.status)
	}
}
