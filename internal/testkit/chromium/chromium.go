// Package chromium is the browser side of the page tests: a real headless
// Chromium (chromedp, Debian's chromium) with a fresh profile, and phone
// and desktop screenshots that fail a page which scrolls sideways. It is
// imported only by tests (consent-ui's and the admin pages' end-to-end
// tests), never by the servers.
//
// Screenshots go to LINKSLOT_SCREENSHOT_DIR, or var/screenshots at the
// module root.
package chromium

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// New starts a real headless Chromium with a fresh profile and answers its
// context (90 s at most), closed when the test ends. It skips when
// Chromium is missing, except under CI=true, where it fails.
func New(t testing.TB) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed; CI requires the browser tests (apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("no-first-run", true),
	)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // start the browser now
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// ScreenshotDir is LINKSLOT_SCREENSHOT_DIR, or var/screenshots at the
// module root (the nearest folder above the test's with a go.mod),
// created when missing.
func ScreenshotDir(t testing.TB) string {
	t.Helper()
	d := os.Getenv("LINKSLOT_SCREENSHOT_DIR")
	if d == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatalf("screenshot folder: %v", err)
		}
		d = filepath.Join(root, "var", "screenshots")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatalf("screenshot folder: %v", err)
	}
	return d
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the test's folder")
		}
		dir = up
	}
}

// viewports are the screenshot sizes: a phone and a desktop.
var viewports = []struct {
	name   string
	w, h   int64
	mobile bool
}{{"phone", 390, 844, true}, {"desktop", 1280, 800, false}}

// Shoot saves screenshots NAME-phone.png and NAME-desktop.png in dir,
// running load at each size first (none: the page the browser shows).
// With fits, a page that scrolls sideways at either size fails the test.
// The viewport is back at the desktop size afterwards.
func Shoot(t testing.TB, ctx context.Context, dir, name string, fits bool, load ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	must := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, sz := range viewports {
		opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
		if sz.mobile {
			opts = []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateScale(2)}
		}
		must(chromedp.Do(ctx, append([]chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(sz.w, sz.h, opts...)}, load...)...), "open "+name)
		// The layout fits the width: nothing scrolls sideways. (On a phone
		// the layout viewport grows to fit wide content, so innerWidth
		// alone would not tell.)
		overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(
			`document.documentElement.scrollWidth > Math.min(window.innerWidth, %d)`, sz.w)))
		must(err, "overflow")
		if overflow && fits {
			t.Errorf("%s at %s scrolls sideways", name, sz.name)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		must(err, "screenshot")
		must(os.WriteFile(filepath.Join(dir, name+"-"+sz.name+".png"), png, 0o644), "write screenshot")
	}
	must(chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)), "reset the viewport")
}
