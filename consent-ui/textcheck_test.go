package consentui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestControlCharactersInForms: U+0000 in a form field answers the page
// with a form error naming the field, on both backends (PostgreSQL cannot
// store NUL in text; SQLite can), never a server error.
func TestControlCharactersInForms(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, envOpts{store: s})
		c := e.client()
		for _, tc := range []struct {
			from, path string
			form       url.Values
		}{
			{"/login", "/login", url.Values{"email": {"a\x00b@example.com"}, "password": {"whatever-pass"}}},
			{"/signup", "/signup", url.Values{"email": {"a\x00b@example.com"}, "password": {"long enough pass"}, "password_repeat": {"long enough pass"}}},
		} {
			r := c.post(tc.from, tc.path, tc.form)
			if r.status != http.StatusBadRequest || !strings.Contains(r.body, "control character") {
				t.Errorf("POST %s %v: %d, want 400 with a form error:\n%.400s", tc.path, tc.form, r.status, r.body)
			}
		}
		c.signUpAndIn("nul@example.com", "a long password 1")
		r := c.post("/account/connections", "/account/connections/disconnect", url.Values{"link_id": {"link\x00"}})
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, "control character") {
			t.Errorf("disconnect with NUL: %d %.400s", r.status, r.body)
		}
	})
}
