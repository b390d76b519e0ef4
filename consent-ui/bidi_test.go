package consentui_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestConsentNameCannotReorder: an app calling itself "Claude" followed by
// a right-to-left override and reversed text (as a metadata document may)
// is shown on the consent page without the override and isolated in <bdi>,
// so it cannot make what follows it read "Claude microsoft.com".
func TestConsentNameCannotReorder(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.client()
	c.signUpAndIn("ada@example.com", testPassword)
	name := "Claude\u202e\u2066moc.tfosorcim\u2069\u202c\x1b"
	r := c.get("/test/authorize?redirect_uri=http://127.0.0.1:5555/cb&client_name=" + url.QueryEscape(name))
	for _, want := range []string{`<h1><bdi class="client">Claudemoc.tfosorcim</bdi> wants to connect`,
		`If you allow it, <bdi>Claudemoc.tfosorcim</bdi> will be able to:`, "<title>Connect Claudemoc.tfosorcim"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	for _, bad := range []string{"\u202e", "\u202c", "\u2066", "\u2069", "\x1b"} {
		if strings.Contains(r.body, bad) {
			t.Errorf("consent page holds %+q", bad)
		}
	}
}
