package businessui_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func byID(id string) string { return fmt.Sprintf(`//*[@id=%q]`, id) }

func button(text string) string { return fmt.Sprintf(`//button[normalize-space()=%q]`, text) }

func heading(text string) string { return fmt.Sprintf(`//h1[contains(normalize-space(), %q)]`, text) }

func bodyText(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body"), chromedp.NodeVisible))
	must(t, err, "read page")
	return s
}

// press clicks a button and waits for the answer, which must be 200 (a
// redirect to a page counts as its page's status).
func press(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(button(text)))
	must(t, err, "press "+text)
	if resp.Status != http.StatusOK {
		t.Fatalf("press %s: %d", text, resp.Status)
	}
}

// slotsAt is the availability answer's local start times of a staff
// member's service on a local date, from engine.
func slotsAt(t *testing.T, engine *booking.Service, staff, service, date string) []string {
	t.Helper()
	av, err := engine.Availability(context.Background(), booking.AvailabilityQuery{BusinessRef: demo.MemberBusiness, ServiceRef: service, LocalDate: date, StaffRef: staff})
	must(t, err, "availability")
	var out []string
	for _, st := range av.Staff {
		for _, sl := range st.Slots {
			out = append(out, sl.StartsAt.Format("15:04"))
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestOwnerDrivesTheConsole signs in as owner@example.com in headless
// Chromium and drives the console through its pages: the day and the
// week, the bookings list filtered to pending, time off that removes a
// slot from the availability answer of another booking engine on the same
// database (another replica's catalog cache), confirming and declining
// pending bookings, cancelling with a reason, marking a past booking a
// no-show, an edit of hours that would orphan a booking, the settings and
// members pages — with phone and desktop screenshots of each view.
func TestOwnerDrivesTheConsole(t *testing.T) {
	ctx := chromium.New(t)
	s := sqltest.SQLite(t)
	e := newEnv(t, s)
	shots := chromium.ScreenshotDir(t)
	bg := context.Background()
	base := e.srv.URL + "/business/" + demo.MemberBusiness

	// What the business has: a confirmed booking with Marcus ahead and
	// one behind (imported as they were).
	wed := e.nextWeekday(time.Wednesday, 3, 0, 0)
	c := e.book("stf-marcus-reid", "svc-skin-fade", wed.Add(14*time.Hour), store.BookingConfirmed)
	ago := time.Now().In(e.loc).AddDate(0, 0, -2)
	past := e.book("stf-marcus-reid", "svc-classic-haircut", time.Date(ago.Year(), ago.Month(), ago.Day(), 3, 0, 0, 0, e.loc), store.BookingConfirmed)

	// The demo person's agent, linked through the pages; the resource
	// server is another replica with its own catalog cache.
	ag := e.linkAgent()
	thu := e.nextWeekday(time.Thursday, 3, 0, 0).Format("2006-01-02")
	if before := ag.slots("stf-marcus-reid", "svc-classic-haircut", thu); !contains(before, "10:00") {
		t.Fatalf("no 10:00 slot before the time off: %v", before)
	}
	// Another booking engine on the same database, its catalog cached
	// before the time off too.
	replica := booking.NewService(s, store.SystemClock)
	if before := slotsAt(t, replica, "stf-marcus-reid", "svc-classic-haircut", thu); !contains(before, "10:00") {
		t.Fatalf("no 10:00 slot before the time off: %v", before)
	}

	// Sign in on the way to the console.
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/business"), chromedp.WaitVisible(heading("Sign in"))), "console → sign in")
	must(t, chromedp.Do(ctx, chromedp.SendKeys(byID("email"), demo.OwnerEmail), chromedp.SendKeys(byID("password"), password)), "type")
	press(t, ctx, "Sign in")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(byID("date"))), "the day view")

	// The classic haircut now waits for the business's confirmation; the
	// agent books two, which are pending.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/settings"), chromedp.WaitVisible(heading("Services")),
		chromedp.Click(byID("c-svc-classic-haircut"))), "requires confirmation")
	must(t, chromedp.Do(ctx, chromedp.Click(`//form[@aria-label="Classic haircut"]//button`), chromedp.WaitVisible(`//div[@role="status"]`)), "save the service")
	p1, st1 := ag.book(demo.MemberStaff, "svc-classic-haircut", wed.Add(9*time.Hour+30*time.Minute), "console-browser-key-0001")
	p2, st2 := ag.book(demo.MemberStaff, "svc-classic-haircut", wed.Add(16*time.Hour), "console-browser-key-0002")
	if st1 != store.BookingPending || st2 != store.BookingPending {
		t.Fatalf("bookings of a service that requires confirmation: %s %s, want pending", st1, st2)
	}

	// The day: Wednesday, everyone.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/day?date="+wed.Format("2006-01-02")), chromedp.WaitVisible(heading("Wednesday"))), "day")
	if txt := bodyText(t, ctx); !strings.Contains(txt, "Skin fade") || strings.Count(txt, "Waiting for you") != 2 || !strings.Contains(txt, "Dana Kowalski") {
		t.Fatalf("day view:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-day", true)

	// Dana's week.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/week?date="+wed.Format("2006-01-02")+"&staff="+e.staff(demo.MemberStaff).ID),
		chromedp.WaitVisible(heading("Week of"))), "week")
	if txt := bodyText(t, ctx); !strings.Contains(txt, "16:00") || strings.Contains(txt, "Skin fade") {
		t.Fatalf("Dana's week:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-week", true)

	// The list, filtered to pending.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/bookings?from="+time.Now().In(e.loc).AddDate(0, 0, -7).Format("2006-01-02")+"&to="+wed.AddDate(0, 0, 7).Format("2006-01-02")),
		chromedp.WaitVisible(heading("Bookings")), chromedp.SetValue(byID("state"), store.BookingPending)), "list")
	press(t, ctx, "Filter")
	if txt := bodyText(t, ctx); !strings.Contains(txt, p1) || !strings.Contains(txt, p2) || strings.Contains(txt, c.Reference) {
		t.Fatalf("pending list:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-bookings", true)

	// Time off: Marcus, Thursday 10:00–11:00.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/time-off"), chromedp.WaitVisible(heading("Time off")),
		chromedp.SetValue(byID("staff"), e.staff("stf-marcus-reid").ID),
		chromedp.SetValue(byID("from_date"), thu), chromedp.SetValue(byID("from_time"), "10:00"),
		chromedp.SetValue(byID("to_date"), thu), chromedp.SetValue(byID("to_time"), "11:00"),
		chromedp.SendKeys(byID("reason"), "Dentist")), "time off form")
	press(t, ctx, "Block this time")
	if txt := bodyText(t, ctx); !strings.Contains(txt, "The time off is blocked") || !strings.Contains(txt, "Dentist") {
		t.Fatalf("after blocking:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-time-off", true)
	if after := slotsAt(t, replica, "stf-marcus-reid", "svc-classic-haircut", thu); contains(after, "10:00") || contains(after, "10:30") || !contains(after, "11:00") {
		t.Fatalf("the other replica still offers the blocked time: %v", after)
	}
	if after := ag.slots("stf-marcus-reid", "svc-classic-haircut", thu); contains(after, "10:00") || contains(after, "10:30") || !contains(after, "11:00") {
		t.Fatalf("check_business_availability still offers the blocked time: %v", after)
	}

	// Cancel Marcus's Wednesday booking with a reason.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/bookings/"+c.Reference), chromedp.WaitVisible(button("Cancel the booking"))), "booking page")
	if txt := bodyText(t, ctx); !strings.Contains(txt, demo.AccountEmail) || !strings.Contains(txt, "Short on the sides") {
		t.Fatalf("booking details:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-booking", true)
	must(t, chromedp.Do(ctx, chromedp.SendKeys(byID("reason-cancel"), "Marcus is ill this week.")), "reason")
	press(t, ctx, "Cancel the booking")
	if txt := bodyText(t, ctx); !strings.Contains(txt, "The booking was cancelled") {
		t.Fatalf("after cancel:\n%s", txt)
	}
	if got, _ := s.GetBookingByReference(bg, c.Reference); got.Status != store.BookingCancelled || got.CancelReason != "Marcus is ill this week." {
		t.Fatalf("cancelled booking: %+v", got)
	}

	// The past booking: a no-show.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/bookings/"+past.Reference), chromedp.WaitVisible(button("Mark as no-show"))), "past booking")
	press(t, ctx, "Mark as no-show")
	if got, _ := s.GetBookingByReference(bg, past.Reference); got.Status != store.BookingNoShow {
		t.Fatalf("no-show: %+v", got)
	}

	// Confirm one pending booking, decline the other.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/bookings/"+p1), chromedp.WaitVisible(button("Confirm the booking"))), "pending booking")
	chromium.Shoot(t, ctx, shots, "console-pending", true)
	press(t, ctx, "Confirm the booking")
	if txt := bodyText(t, ctx); !strings.Contains(txt, "The booking is confirmed") {
		t.Fatalf("after confirm:\n%s", txt)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/bookings/"+p2), chromedp.WaitVisible(button("Decline the booking")),
		chromedp.SendKeys(byID("reason-decline"), "Dana is fully booked.")), "second pending booking")
	press(t, ctx, "Decline the booking")
	for ref, want := range map[string]string{p1: store.BookingConfirmed, p2: store.BookingDeclined} {
		if got, _ := s.GetBookingByReference(bg, ref); got.Status != want {
			t.Fatalf("%s: %s, want %s", ref, got.Status, want)
		}
	}

	// Settings; closing Wednesdays would orphan the confirmed booking:
	// the console lists it and changes nothing.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/settings"), chromedp.WaitVisible(heading("Opening hours"))), "settings")
	chromium.Shoot(t, ctx, shots, "console-settings", true)
	must(t, chromedp.Do(ctx, chromedp.SetValue(`//input[@name="wed_open1"]`, ""), chromedp.SetValue(`//input[@name="wed_close1"]`, "")), "close Wednesday")
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(button("Save the hours")))
	must(t, err, "save hours")
	if resp.Status != http.StatusConflict {
		t.Fatalf("orphaning hours: %d", resp.Status)
	}
	if txt := bodyText(t, ctx); !strings.Contains(txt, p1) || !strings.Contains(txt, "Confirm the new hours") {
		t.Fatalf("orphans page:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-orphans", true)
	if cat, _ := s.LoadCatalog(bg, demo.MemberBusiness); len(cat.OpeningHours) != len(e.cat.OpeningHours) {
		t.Fatalf("the refused edit changed the hours: %v", cat.OpeningHours)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/members"), chromedp.WaitVisible(heading("Members"))), "members")
	if txt := bodyText(t, ctx); !strings.Contains(txt, demo.StaffEmail) {
		t.Fatalf("members:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-members", true)

	// Credentials: reached from the navigation; one added, then edited.
	must(t, chromedp.Do(ctx, chromedp.Click(`//nav//a[normalize-space()="Credentials"]`), chromedp.WaitVisible(heading("Add a credential"))), "credentials")
	must(t, chromedp.Do(ctx, chromedp.SetValue(byID("kind"), "insurance"), chromedp.SendKeys(byID("name"), "Public liability insurance"),
		chromedp.SendKeys(byID("issuer"), "Aviva"), chromedp.SendKeys(byID("number"), "PL-88213"),
		chromedp.SetValue(byID("valid_until"), "2027-03-31")), "fill in a credential")
	press(t, ctx, "Add the credential")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(`//div[@role="status"]`)), "credential added")
	if txt := bodyText(t, ctx); !strings.Contains(txt, "Public liability insurance") || !strings.Contains(txt, "2027-03-31") {
		t.Fatalf("credentials:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-credentials", true)
	must(t, chromedp.Do(ctx, chromedp.Click(`//a[@aria-label="Edit Public liability insurance"]`), chromedp.WaitVisible(heading("Edit"))), "edit a credential")
	chromium.Shoot(t, ctx, shots, "console-credential-edit", true)
	must(t, chromedp.Do(ctx, chromedp.SetValue(byID("number"), "PL-99001")), "change the number")
	press(t, ctx, "Save the credential")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(`//div[@role="status"]`)), "credential saved")
	if cs, _ := s.ListCredentials(bg, e.cat.Business.ID); len(cs) != 1 || cs[0].Number != "PL-99001" || cs[0].Kind != store.CredentialInsurance {
		t.Fatalf("credentials after the edit: %+v", cs)
	}
	// The calendars and callbacks pages, with one connect form open.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/calendars"), chromedp.WaitVisible(heading("Calendars")),
		chromedp.Click(`(//summary)[1]`)), "calendars")
	chromium.Shoot(t, ctx, shots, "console-calendars", true)
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/callbacks"), chromedp.WaitVisible(heading("Callback requests"))), "callbacks")
	chromium.Shoot(t, ctx, shots, "console-callbacks", true)
}

// TestStaffSeeTheirOwnCalendar signs in as staff@example.com (Dana
// Kowalski): the day shows Dana's column only, the navigation no owners'
// pages, and another staff member's booking is a page that does not exist.
func TestStaffSeeTheirOwnCalendar(t *testing.T) {
	ctx := chromium.New(t)
	s := sqltest.SQLite(t)
	e := newEnv(t, s)
	shots := chromium.ScreenshotDir(t)
	base := e.srv.URL + "/business/" + demo.MemberBusiness
	wed := e.nextWeekday(time.Wednesday, 3, 0, 0)
	e.book(demo.MemberStaff, "svc-hot-towel-shave", wed.Add(10*time.Hour), store.BookingConfirmed)
	other := e.book("stf-marcus-reid", "svc-skin-fade", wed.Add(11*time.Hour), store.BookingConfirmed)

	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/business"), chromedp.WaitVisible(heading("Sign in")),
		chromedp.SendKeys(byID("email"), demo.StaffEmail), chromedp.SendKeys(byID("password"), password)), "sign in")
	press(t, ctx, "Sign in")
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/day?date="+wed.Format("2006-01-02")), chromedp.WaitVisible(heading("Wednesday"))), "day")
	txt := bodyText(t, ctx)
	if !strings.Contains(txt, "Hot-towel shave") || strings.Contains(txt, "Marcus") || strings.Contains(txt, "Skin fade") ||
		strings.Contains(txt, "Settings") || strings.Contains(txt, "Members") || !strings.Contains(txt, "staff") {
		t.Fatalf("staff day:\n%s", txt)
	}
	chromium.Shoot(t, ctx, shots, "console-staff-day", true)
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(base+"/bookings/"+other.Reference))
	must(t, err, "another staff member's booking")
	if resp.Status != http.StatusNotFound {
		t.Fatalf("another staff member's booking: %d, want 404", resp.Status)
	}
	chromium.Shoot(t, ctx, shots, "console-not-found", true)
}
