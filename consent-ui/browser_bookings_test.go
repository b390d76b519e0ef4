package consentui_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	goical "github.com/emersion/go-ical"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

// TestBrowserMyBookingsExportDelete drives the whole system (pages, outbox
// worker, SMTP server, resource server) in headless Chromium: sign up and
// confirm the address from the e-mail; link an agent; My bookings lists the
// bookings; Cancel… shows the service's summary with the policy and the
// fee, and Cancel this booking (pressed with the keyboard) cancels it: the
// answer page, a replay when the same form is sent again, Activity "on the
// web", and one cancellation e-mail each to the person and the business
// with an iCalendar CANCEL; the export downloaded by the browser holds the
// account, the link, the bookings and the activity; deletion refuses a
// wrong password, then with the right one cancels the last upcoming
// booking (e-mailed too), and the resource server refuses the agent's
// access token within 5 s. Screenshots of every page on the way.
func TestBrowserMyBookingsExportDelete(t *testing.T) {
	ctx := chromium.New(t)
	bg := context.Background()
	sy := newSystem(t)
	dir := chromium.ScreenshotDir(t)
	const email, pw = "ada@example.com", "Bookings-Canary-Passphrase-5"

	// Sign up and confirm the address from the e-mail.
	signUpInBrowser(t, ctx, sy.url, email, pw)
	must(t, chromedp.Do(ctx, chromedp.Navigate(sy.mailLink(1, email, "/verify")), chromedp.WaitVisible(heading("confirmed"))), "verify")

	// Link an agent: consent in the browser, the code exchanged.
	conf, waitClient := sy.demoClient()
	verifier := oauth2.GenerateVerifier()
	must(t, chromedp.Do(ctx, chromedp.Navigate(conf.AuthCodeURL("st-bookings", oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(heading("wants to connect"))), "consent")
	press(t, ctx, "Allow")
	tok, err := conf.Exchange(bg, waitClient("consent").Get("code"), oauth2.VerifierOption(verifier))
	must(t, err, "exchange")
	if st := sy.toolsList(tok.AccessToken); st != 200 {
		t.Fatalf("the agent's token: %d", st)
	}

	// The person's bookings.
	acct, err := sy.store.GetAccountByEmail(bg, email)
	must(t, err, "account")
	cat := studio(t, sy.store)
	now := store.SystemClock()
	soon := now.Add(5 * time.Hour).Truncate(time.Hour) // inside the 24 h window: a fee
	book(t, sy.store, cat, acct, "LS-WEBCX", soon, now)
	book(t, sy.store, cat, acct, "LS-KEEPB", now.Add(10*24*time.Hour).Truncate(time.Hour), now)
	book(t, sy.store, cat, acct, "LS-PASTB", now.Add(-72*time.Hour).Truncate(time.Hour), now)

	// From the account page's navigation to My bookings.
	must(t, chromedp.Do(ctx, chromedp.Navigate(sy.url+"/account"), chromedp.WaitVisible(heading("Your account")),
		chromedp.Click(`//nav[@aria-label="Account"]/a[normalize-space()="My bookings"]`), chromedp.WaitVisible(heading("My bookings"))), "nav to My bookings")
	text := bodyText(t, ctx)
	for _, want := range []string{"LS-WEBCX", "LS-KEEPB", "Haircut at Studio Nord", "Sam", "EUR 38.00", "(Europe/Berlin, CE"} {
		if !strings.Contains(text, want) {
			t.Errorf("My bookings lacks %q", want)
		}
	}
	if strings.Contains(text, "LS-PASTB") {
		t.Error("a past booking is listed as upcoming")
	}
	shootPage(t, ctx, sy.url, dir, "bookings", "/account/bookings", heading("My bookings"))
	shootPage(t, ctx, sy.url, dir, "bookings-past", "/account/bookings?show=past", heading("My bookings"))

	// Cancel…: the confirm page shows the service's summary.
	must(t, chromedp.Do(ctx, chromedp.Navigate(sy.url+"/account/bookings"), chromedp.WaitVisible(heading("My bookings")),
		chromedp.Click(`//a[starts-with(@aria-label, "Cancel booking LS-WEBCX")]`), chromedp.WaitVisible(heading("Cancel booking LS-WEBCX?"))), "Cancel…")
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("blockquote.summary")))
	must(t, err, "summary")
	for _, want := range []string{"Cancel booking LS-WEBCX:", "Late cancellations cost EUR 10.00.", "Fee if cancelled now: EUR 10.00"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the confirm page's summary lacks %q:\n%s", want, summary)
		}
	}
	if b, _ := sy.store.GetBookingByReference(bg, "LS-WEBCX"); b.Status != store.BookingConfirmed {
		t.Fatal("the confirm page cancelled the booking")
	}
	shootPage(t, ctx, sy.url, dir, "cancel-confirm", "/account/bookings/cancel?booking=LS-WEBCX", heading("Cancel booking LS-WEBCX?"))
	// Keep the form's fields, to send the same form again afterwards.
	form, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](
		`Object.fromEntries(new FormData(document.querySelector('form[action="/account/bookings/cancel"]')))`))
	must(t, err, "form fields")
	// With the keyboard only: Tab to the button (it shows a focus ring),
	// Enter.
	for i := 0; ; i++ {
		must(t, chromedp.Do(ctx, chromedp.KeyEvent("\t")), "Tab")
		label, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.textContent.trim()`))
		must(t, err, "focused element")
		if label == "Cancel this booking" {
			break
		}
		if i == 20 {
			t.Fatal("Tab never reached the Cancel this booking button")
		}
	}
	ring, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`))
	must(t, err, "focus ring")
	if ring == "none" {
		t.Error("the focused Cancel button shows no focus ring")
	}
	resp, err := chromedp.RunResponse(ctx, chromedp.KeyEvent("\r"))
	must(t, err, "press Enter")
	if resp.Status != 200 {
		t.Fatalf("cancel answered %d", resp.Status)
	}
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Booking LS-WEBCX is cancelled"))), "answer page")
	text = bodyText(t, ctx)
	for _, want := range []string{"EUR 10.00 (settled with the business)", "We are e-mailing you a confirmation", "The business is told by e-mail"} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer page lacks %q", want)
		}
	}
	shootCurrent(t, ctx, dir, "cancel-done")
	// The same form sent again: the first answer, nothing done twice.
	js := `(() => { const f = document.createElement('form'); f.method = 'post'; f.action = '/account/bookings/cancel';
		for (const [k, v] of Object.entries(` + mustJSON(t, form) + `)) { const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.append(i); }
		document.body.append(f); f.submit(); return true })()`
	resp, err = chromedp.RunResponse(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		return err
	}))
	must(t, err, "send the form again")
	if resp.Status != 200 || !strings.Contains(bodyText(t, ctx), "already done when the form was first sent") {
		t.Fatalf("the same form again: %d %s", resp.Status, bodyText(t, ctx))
	}
	if b, _ := sy.store.GetBookingByReference(bg, "LS-WEBCX"); b.Status != store.BookingCancelled || b.Version != 2 || b.CancellationFeeCents != 1000 {
		t.Fatalf("booking after cancel and replay: %+v", b)
	}

	// Activity says it was done on the web.
	must(t, chromedp.Do(ctx, chromedp.Navigate(sy.url+"/account/activity"), chromedp.WaitVisible(heading("Activity"))), "activity")
	if text := bodyText(t, ctx); !strings.Contains(text, "Cancelled an appointment") || !strings.Contains(text, "on the web") ||
		!strings.Contains(text, "Cancel booking LS-WEBCX:") {
		t.Errorf("Activity: %s", text)
	}
	shootPage(t, ctx, sy.url, dir, "activity-web", "/account/activity", heading("Activity"))

	// One cancellation e-mail each to the person and the business, with
	// the calendar's CANCEL (mail 1 was the verification, 2 the connected
	// app notice).
	checkCancelMails(t, sy, 4, "LS-WEBCX", email, "desk@studio.example")

	// The export, downloaded by the browser.
	dl := t.TempDir()
	must(t, chromedp.Do(ctx, chromedp.Navigate(sy.url+"/account"), chromedp.WaitVisible(heading("Your account")),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl})
			return err
		}),
		chromedp.Click(`//a[@href="/account/export"]`)), "download the export")
	file := filepath.Join(dl, "linkslot-export.json")
	var raw []byte
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if raw, err = os.ReadFile(file); err == nil && json.Valid(raw) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no export downloaded: %v", err)
		}
	}
	var doc struct {
		Account  struct{ Email string }
		Links    []struct{ App, Status string }
		Bookings []struct {
			Reference, Status, Business, Service, Staff, Timezone string
		}
		Activity []struct{ App, Via, Action, Summary string }
	}
	must(t, json.Unmarshal(raw, &doc), "decode the export")
	statuses := map[string]string{}
	for _, b := range doc.Bookings {
		statuses[b.Reference] = b.Status
		if b.Business != "Studio Nord" || b.Service != "Haircut" || b.Staff != "Sam" || b.Timezone != "Europe/Berlin" {
			t.Errorf("exported booking %+v", b)
		}
	}
	if doc.Account.Email != email || len(doc.Links) != 1 || doc.Links[0].App != "Demo MCP client" || doc.Links[0].Status != store.LinkActive ||
		statuses["LS-WEBCX"] != store.BookingCancelled || statuses["LS-KEEPB"] != store.BookingConfirmed || statuses["LS-PASTB"] != store.BookingConfirmed ||
		len(doc.Activity) != 1 || doc.Activity[0].Via != store.ViaWeb || doc.Activity[0].Action != "Cancelled an appointment" ||
		!strings.HasPrefix(doc.Activity[0].Summary, "Cancel booking LS-WEBCX:") {
		t.Errorf("export: %s", raw)
	}
	if strings.Contains(string(raw), pw) || strings.Contains(string(raw), tok.AccessToken) {
		t.Error("the export holds a secret")
	}
	// The downloaded file as Chromium shows it (its own text viewer, not
	// a page of ours: long lines may run past a phone's width).
	chromium.Shoot(t, ctx, dir, "export", false, chromedp.Navigate("file://"+file), chromedp.WaitVisible("body"))

	// Delete: a wrong password deletes nothing.
	shootPage(t, ctx, sy.url, dir, "delete", "/account/delete", heading("Delete your account"))
	must(t, chromedp.Do(ctx, chromedp.Navigate(sy.url+"/account/delete"), chromedp.WaitVisible(heading("Delete your account"))), "delete page")
	if text := bodyText(t, ctx); !strings.Contains(text, "Haircut at Studio Nord") {
		t.Errorf("the delete page does not list the upcoming booking: %s", text)
	}
	typeInto(t, ctx, "Your password", "not-the-password")
	must(t, chromedp.Do(ctx, chromedp.Click(field("I understand that my account is deleted for good"))), "tick")
	if st := press(t, ctx, "Delete my account"); st != http.StatusUnprocessableEntity {
		t.Fatalf("wrong password: %d", st)
	}
	if a, _ := sy.store.GetAccount(bg, acct.ID); a.DeletedAt != nil {
		t.Fatal("a wrong password deleted the account")
	}
	if st := sy.toolsList(tok.AccessToken); st != 200 {
		t.Fatalf("a wrong password cut the agent off: %d", st)
	}
	typeInto(t, ctx, "Your password", pw)
	must(t, chromedp.Do(ctx, chromedp.Click(field("I understand that my account is deleted for good"))), "tick")
	if st := press(t, ctx, "Delete my account"); st != 200 {
		t.Fatalf("delete: %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Your account was deleted"))), "deleted page")
	shootCurrent(t, ctx, dir, "deleted")
	// The resource server refuses the link's token within 5 s.
	sy.rsSkew.Store(int64(5 * time.Second))
	if st := sy.toolsList(tok.AccessToken); st != http.StatusUnauthorized {
		t.Fatalf("5 s after the deletion the resource server answered %d, want 401", st)
	}
	// The upcoming booking was cancelled and notified; the address is free.
	checkCancelMails(t, sy, 6, "LS-KEEPB", email, "desk@studio.example")
	if _, err := sy.store.GetAccountByEmail(bg, email); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the address is still taken: %v", err)
	}
	if logs := sy.logs.String(); strings.Contains(logs, pw) || strings.Contains(logs, tok.AccessToken) {
		t.Error("a password or token reached the logs")
	}
}

// checkCancelMails waits for at least n e-mails and checks that exactly one
// cancellation of booking ref went to each address, with a text/calendar
// part (and the invite.ics attachment) that go-ical reads as METHOD:CANCEL,
// STATUS:CANCELLED for the booking's UID.
func checkCancelMails(t *testing.T, sy *system, n int, ref string, to ...string) {
	t.Helper()
	for _, addr := range to {
		var found []parsedMail
		for _, m := range sy.mailsTo(n, addr, "Cancelled: Haircut at Studio Nord") {
			if cal := testkit.FindPart(m.Parts, "text/calendar", false); cal != nil && strings.Contains(cal.Body, ref) {
				found = append(found, m)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%d cancellation e-mails of %s to %s, want 1", len(found), ref, addr)
		}
		cal := testkit.FindPart(found[0].Parts, "text/calendar", false)
		if !strings.EqualFold(cal.Params["method"], "CANCEL") || testkit.FindPart(found[0].Parts, "application/ics", true) == nil {
			t.Fatalf("calendar part %+v", cal.Params)
		}
		obj, err := goical.NewDecoder(strings.NewReader(cal.Body)).Decode()
		must(t, err, "decode the iCalendar object")
		evs := obj.Events()
		if len(evs) != 1 || obj.Props.Get(goical.PropMethod).Value != "CANCEL" ||
			evs[0].Props.Get(goical.PropStatus).Value != "CANCELLED" || !strings.HasPrefix(evs[0].Props.Get(goical.PropUID).Value, ref+"@") {
			t.Fatalf("iCalendar of %s to %s:\n%s", ref, addr, cal.Body)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err, "JSON")
	return string(b)
}
