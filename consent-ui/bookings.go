package consentui

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/store"
)

// My bookings (docs/reference.md §12): /account/bookings lists the person's
// upcoming, past and cancelled bookings; /account/bookings/cancel is the
// web front end of the mutation service's Cancel, as the person on the web
// (mutation.ChannelWeb). Its GET is the preview: the page shows the
// summary the service computes, word for word, with the policy and the fee
// due now, and a form carrying that summary and a fresh idempotency key.
// Its POST sends the five confirmation fields; the answer page shows the
// outcome. Submitting the same form twice replays the first answer: the
// key is scoped to the account, so nothing is cancelled or notified twice.

// bookingsPerPage is how many bookings a tab of the page lists.
const bookingsPerPage = 20

// webConfirmationText is user_confirmation_text for a cancellation
// confirmed on the web: the person's act, in words.
const webConfirmationText = `Pressed "Cancel this booking" on the Linkslot web page after reading the summary.`

// bookingTabs are the page's tabs, in order, with their empty-page text.
var bookingTabs = []struct{ Status, Label, Empty string }{
	{"upcoming", "Upcoming", "No upcoming bookings. When you book through an app, the appointment appears here."},
	{"past", "Past", "No past bookings yet."},
	{"cancelled", "Cancelled", "No cancelled bookings."},
	{"waitlisted", "Waitlist", "You are on no waitlist. When an app puts you on one, it appears here, with any time held for you."},
}

type bookingTab struct {
	Status, Label, URL string
	Current            bool
}

type bookingItem struct {
	booking.BookingView
	When      string // the local span with the zone's name and abbreviation
	Price     string
	Payment   string // the payment state in words ("" for none)
	Fee       string // the cancellation fee charged, for a cancelled booking
	CancelURL string // upcoming bookings only
	// RespondBy: a pending booking waits for the business's answer until
	// this local instant (docs/reference.md "Bookings the business answers").
	RespondBy string
}

// waitlistItem is one waitlist entry on the Waitlist tab (docs/reference.md
// §16), with a form to leave it.
type waitlistItem struct {
	booking.WaitlistView
	Window string // the dates and time of day in words
	Offer  string // the time held for the person, in words ("" for none)
	Key    string // a fresh idempotency key for the leave form
}

type bookingsData struct {
	Tabs             []bookingTab
	Status, Empty    string
	Items            []bookingItem
	Waitlist         []waitlistItem
	Notice           string
	Page             int
	PrevURL, NextURL string
}

func bookingsURL(status string, page int) string {
	u := "/account/bookings"
	q := url.Values{}
	if status != "upcoming" {
		q.Set("show", status)
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

func paymentWords(state string) string {
	switch state {
	case store.PaymentDepositHeld:
		return "Deposit held by the business"
	case store.PaymentPaid:
		return "Paid to the business"
	}
	return ""
}

func itemOf(v booking.BookingView) bookingItem {
	it := bookingItem{BookingView: v, Payment: paymentWords(v.PaymentState),
		Price: confirm.Money{Cents: v.PriceCents, Currency: v.Currency}.String()}
	// The booking engine hands over instants in the business's zone.
	it.When = confirm.LocalSpan(v.StartsAt, v.EndsAt, v.StartsAt.Location())
	if v.Status == store.BookingPending && v.RespondBy != nil {
		it.RespondBy = confirm.LocalInstant(*v.RespondBy, v.StartsAt.Location())
	}
	if v.Status == store.BookingCancelled {
		it.Fee = "none"
		if v.CancellationFeeCents > 0 {
			it.Fee = confirm.Money{Cents: v.CancellationFeeCents, Currency: v.Currency}.String() + " (settled with the business)"
		}
	}
	return it
}

func (u *UI) getBookings(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	status := r.URL.Query().Get("show")
	if status == "" {
		status = "upcoming"
	}
	d := bookingsData{Status: status}
	for _, t := range bookingTabs {
		d.Tabs = append(d.Tabs, bookingTab{Status: t.Status, Label: t.Label, URL: bookingsURL(t.Status, 1), Current: t.Status == status})
		if t.Status == status {
			d.Empty = t.Empty
		}
	}
	if d.Empty == "" {
		u.RenderError(w, r, http.StatusNotFound, "No such list", "Your bookings are listed as upcoming, past or cancelled. Go back to My bookings.")
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page < 1 || page > 1000 {
		page = 1
	}
	if status == "waitlisted" {
		u.waitlistTab(w, r, acct, d, page, "")
		return
	}
	p, err := u.bookings.MyBookings(r.Context(), acct.ID, status, bookingsPerPage, (page-1)*bookingsPerPage)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	d.Page = page
	for _, b := range p.Results {
		it := itemOf(b)
		if status == "upcoming" && u.mut != nil {
			it.CancelURL = "/account/bookings/cancel?" + url.Values{"booking": {b.Reference}}.Encode()
		}
		d.Items = append(d.Items, it)
	}
	if page > 1 {
		d.PrevURL = bookingsURL(status, page-1)
	}
	if p.HasMore {
		d.NextURL = bookingsURL(status, page+1)
	}
	v := view{Title: "My bookings", Nav: "bookings", Account: &acct, CSRF: u.CSRFToken(w, r), Data: d}
	u.render(w, r, http.StatusOK, "bookings", v, nil)
}

// cancelData is the confirm page's and the answer page's model.
type cancelData struct {
	Reference string
	Summary   string // exactly what internal/confirm rendered
	Key       string // a fresh idempotency key for the form
	Item      *bookingItem
	// Answer page.
	Done     bool
	Already  bool // the booking was cancelled before this request
	Replay   bool // the same form was sent before; nothing changed again
	Notified []string
}

// webCaller is the signed-in person acting on these pages.
func webCaller(ctx context.Context, accountID string) mutation.Caller {
	return mutation.Caller{AccountID: accountID, Channel: mutation.ChannelWeb, RequestID: requestid.From(ctx)}
}

// newWebKey is a fresh idempotency key for one confirm form.
func newWebKey() string { return store.NewID("web") }

// canCancel returns the signed-in person (for a form: after its CSRF
// check) when this server can cancel on the web, or answers.
func (u *UI) canCancel(w http.ResponseWriter, r *http.Request, form bool) (store.Account, bool) {
	check := u.requireAccount
	if form {
		check = u.accountForm
	}
	acct, _, ok := check(w, r)
	if !ok {
		return store.Account{}, false
	}
	if u.mut == nil {
		u.RenderError(w, r, http.StatusNotFound, "Not available", "Bookings cannot be cancelled on this server's pages. Ask the app you booked with.")
		return store.Account{}, false
	}
	return acct, true
}

// getCancel is the confirm step: the server-computed summary and a form.
func (u *UI) getCancel(w http.ResponseWriter, r *http.Request) {
	acct, ok := u.canCancel(w, r, false)
	if !ok {
		return
	}
	ref := strings.TrimSpace(r.URL.Query().Get("booking"))
	out, err := u.mut.Cancel(r.Context(), webCaller(r.Context(), acct.ID), mutation.CancelRequest{BookingRef: ref}, mutation.Confirmation{})
	if err != nil {
		u.cancelFailed(w, r, acct, err)
		return
	}
	u.cancelAnswer(w, r, acct, ref, out, "")
}

// postCancel sends the confirmation: the summary the page showed, the
// form's key and the person's act.
func (u *UI) postCancel(w http.ResponseWriter, r *http.Request) {
	acct, ok := u.canCancel(w, r, true)
	if !ok {
		return
	}
	if msg := controlCharError(r, "confirmed_summary"); msg != "" {
		u.RenderError(w, r, http.StatusBadRequest, "Nothing was cancelled", msg)
		return
	}
	ref := strings.TrimSpace(r.PostFormValue("booking"))
	summary, key, text, yes := r.PostFormValue("confirmed_summary"), r.PostFormValue("idempotency_key"), webConfirmationText, true
	out, err := u.mut.Cancel(r.Context(), webCaller(r.Context(), acct.ID), mutation.CancelRequest{BookingRef: ref},
		mutation.Confirmation{ConfirmedSummary: &summary, SummaryPresented: &yes, ConfirmationObtained: &yes,
			UserConfirmationText: &text, IdempotencyKey: &key})
	if err != nil {
		u.cancelFailed(w, r, acct, err)
		return
	}
	if out.Status == mutation.StatusCancelled && !out.AlreadyCancelled {
		u.log.InfoContext(r.Context(), "consent-ui: booking cancelled on the web", "account_id", acct.ID,
			"booking", ref, "replay", out.Replay)
	}
	notice := ""
	if out.Status == mutation.StatusSummaryChanged {
		notice = "The booking's details changed since the page was shown, so nothing was cancelled. Read the new summary below and confirm again if you still want to cancel."
	}
	u.cancelAnswer(w, r, acct, ref, out, notice)
}

// cancelAnswer renders an Outcome: the confirm page while nothing was
// executed, the answer page once the booking is cancelled.
func (u *UI) cancelAnswer(w http.ResponseWriter, r *http.Request, acct store.Account, ref string, out mutation.Outcome, errMsg string) {
	d := cancelData{Reference: booking.NormalizeReference(ref), Summary: out.Summary}
	status := http.StatusOK
	if out.Booking != nil {
		it := itemOf(*out.Booking)
		d.Item, d.Reference = &it, out.Booking.Reference
	}
	title := "Cancel booking " + d.Reference
	switch {
	case out.Status == mutation.StatusCancelled:
		d.Done, d.Already, d.Replay = true, out.AlreadyCancelled, out.Replay
		d.Notified = notifiedWords(out.Notified)
		title = "Booking " + d.Reference + " is cancelled"
	default:
		// A preview, a changed summary or missing fields: show the
		// summary the service computed now, with a new key.
		d.Key = newWebKey()
		if errMsg != "" {
			status = http.StatusConflict
		}
	}
	u.render(w, r, status, "cancel", view{Title: title, Nav: "bookings", Account: &acct, CSRF: u.CSRFToken(w, r),
		Error: errMsg, Data: d}, nil)
}

// notifiedWords says who was told, from the Outcome's Notified.
func notifiedWords(n *mutation.Notified) []string {
	if n == nil {
		return nil
	}
	var out []string
	if n.Person == "queued" {
		out = append(out, "We are e-mailing you a confirmation with a calendar update.")
	}
	switch {
	case n.Business == "queued" && n.Webhooks > 0:
		out = append(out, "The business is told by e-mail and through its booking system.")
	case n.Business == "queued":
		out = append(out, "The business is told by e-mail.")
	case n.Webhooks > 0:
		out = append(out, "The business is told through its booking system.")
	}
	return out
}

// cancelFailed shows a refusal of the mutation service in words; anything
// that is not a *problem.Error is a server error.
func (u *UI) cancelFailed(w http.ResponseWriter, r *http.Request, acct store.Account, err error) {
	var pe *problem.Error
	if !errors.As(err, &pe) {
		u.serverError(w, r, err)
		return
	}
	u.log.InfoContext(r.Context(), "consent-ui: web cancellation refused", "account_id", acct.ID, "code", pe.Code)
	status := http.StatusUnprocessableEntity
	msg := pe.Message
	switch pe.Code {
	case problem.CodeBookingNotFound:
		status, msg = http.StatusNotFound, "None of your bookings has that reference. Your bookings are listed under My bookings."
	case problem.CodeInvalidArgument:
		if pe.Field == "booking_reference" {
			status, msg = http.StatusBadRequest, "The page did not say which booking to cancel. Choose the booking under My bookings."
		}
	case problem.CodeIdempotencyConflict:
		status, msg = http.StatusConflict, "This form was already used for another request, so nothing was cancelled. Go back to My bookings and start again."
	case problem.CodeBookingChanged:
		status, msg = http.StatusConflict, "The booking changed while it was being cancelled, so nothing was cancelled. Go back to My bookings and try again."
	case problem.CodeCancellationClosed:
		msg = "This booking has already started or taken place, so it can no longer be cancelled here. Contact the business directly."
	case problem.CodePaymentActive:
		msg = "This booking has a payment or deposit held by the business, so it can only be cancelled with the business directly. Nothing was cancelled."
	}
	u.render(w, r, status, "error", view{Title: "The booking was not cancelled", Nav: "bookings", Account: &acct,
		CSRF: u.CSRFToken(w, r), Data: errorData{Title: "The booking was not cancelled", Message: msg}}, nil)
}
