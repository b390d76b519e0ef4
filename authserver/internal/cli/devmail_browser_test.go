package cli_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkslot/linkslot/authserver/internal/cli"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

// TestDevMailConfirmsSignUp: on the real authorization server (the
// handler `authserver serve` runs, in development with no SMTP URL) a
// person signs up in headless Chromium, follows the sign-in page's pointer
// to the development mailbox, opens the confirmation e-mail there —
// decoded, its link whole and clickable — clicks the link, and the account
// is verified (docs/reference.md §15).
func TestDevMailConfirmsSignUp(t *testing.T) {
	ctx := chromium.New(t)
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + l.Addr().String()
	env := map[string]string{
		"LINKSLOT_DATABASE_URL": "sqlite://" + filepath.Join(dir, "db.sqlite"),
		"LINKSLOT_VAR_DIR":      filepath.Join(dir, "var"),
		"LINKSLOT_SECRET_KEY":   "0123456789abcdef0123456789abcdef",
		"LINKSLOT_ISSUER":       issuer,
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bg, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := app.OpenStore(bg, cfg, log, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := cli.Handler(bg, cfg, s, log, metrics.New("authserver"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)

	const email, pw = "ines@example.com", "Dev-Mail-Canary-Passphrase-4"
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	do("sign up", chromedp.Navigate(issuer+"/signup"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), pw),
		chromedp.SendKeys(chromedp.CSS("#password_repeat"), pw), chromedp.Click(`//button[normalize-space()="Create account"]`))
	do("the pointer to the mailbox", chromedp.WaitVisible(`//a[normalize-space()="development mailbox"]`),
		chromedp.Click(`//a[normalize-space()="development mailbox"]`), chromedp.WaitVisible(`//h1[normalize-space()="Development mail"]`))

	// The outbox worker writes the message within a poll or two.
	subject := `//a[contains(normalize-space(), "Confirm")]`
	for deadline := time.Now().Add(20 * time.Second); ; {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.evaluate('count(`+subject+`)', document, null, XPathResult.NUMBER_TYPE, null).numberValue`))
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			page, _ := chromedp.Run(ctx, chromedp.OuterHTML("html"))
			t.Fatalf("no confirmation e-mail listed within 20 s:\n%s", page)
		}
		time.Sleep(300 * time.Millisecond)
		do("reload the mailbox", chromedp.Reload())
	}
	do("open the e-mail", chromedp.Click(subject), chromedp.WaitVisible(`//dt[normalize-space()="From"]`))
	page, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page, "=3D") || !strings.Contains(page, email) {
		t.Errorf("the message is not shown decoded:\n%s", page)
	}
	verify := `//pre//a[contains(@href, "/verify")]`
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.evaluate('`+verify+`', document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.href`))
	if err != nil || !strings.HasPrefix(href, issuer+"/verify") {
		t.Fatalf("the confirmation link is %q (%v), want a whole link to %s/verify…:\n%s", href, err, issuer, page)
	}
	do("click the confirmation link", chromedp.Click(verify), chromedp.WaitVisible(`//h1[contains(normalize-space(), "confirmed")]`))
	a, err := s.GetAccountByEmail(bg, email)
	if err != nil {
		t.Fatal(err)
	}
	if a.EmailVerifiedAt == nil {
		t.Fatal("the account is not verified after the confirmation link was clicked")
	}
}
