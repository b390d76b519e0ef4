package consentui

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// The Waitlist tab of My bookings (docs/reference.md §16 "Waitlist"): the
// person's entries, each with the time held for them if any, and a form to
// leave the list, which goes through the mutation service (Activity, an
// idempotency key per form, a held time passed to the next person).

// waitlistTab renders the tab; notice is the outcome of a leave.
func (u *UI) waitlistTab(w http.ResponseWriter, r *http.Request, acct store.Account, d bookingsData, page int, notice string) {
	p, err := u.bookings.MyWaitlist(r.Context(), acct.ID, bookingsPerPage, (page-1)*bookingsPerPage)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	d.Page, d.Notice = page, notice
	for _, e := range p.Results {
		it := waitlistItem{WaitlistView: e, Key: newWebKey()}
		days := e.FromDate
		if e.ToDate != e.FromDate {
			days += " to " + e.ToDate
		}
		it.Window = fmt.Sprintf("%s, between %s and %s (%s)", days, e.Earliest, e.Latest, e.TimeZone)
		if o := e.Offer; o != nil {
			it.Offer = fmt.Sprintf("%s with %s, held for you until %s — ask your app to book it with offer %s",
				confirm.LocalSpan(o.StartsAt, o.EndsAt, o.StartsAt.Location()), o.StaffName, o.HeldUntil.Format("15:04 MST"), o.Reference)
		}
		d.Waitlist = append(d.Waitlist, it)
	}
	if page > 1 {
		d.PrevURL = bookingsURL("waitlisted", page-1)
	}
	if p.HasMore {
		d.NextURL = bookingsURL("waitlisted", page+1)
	}
	v := view{Title: "My bookings", Nav: "bookings", Account: &acct, CSRF: u.CSRFToken(w, r), Data: d}
	u.render(w, r, http.StatusOK, "bookings", v, nil)
}

// postLeaveWaitlist takes the person off one waitlist.
func (u *UI) postLeaveWaitlist(w http.ResponseWriter, r *http.Request) {
	acct, ok := u.canCancel(w, r, true)
	if !ok {
		return
	}
	ref := strings.TrimSpace(r.PostFormValue("waitlist"))
	key := strings.TrimSpace(r.PostFormValue("idempotency_key"))
	if ref == "" || len(key) < 16 {
		u.RenderError(w, r, http.StatusBadRequest, "Nothing changed", "The form was incomplete. Go back to My bookings and try again.")
		return
	}
	notice := "You left the waitlist."
	out, err := u.mut.LeaveWaitlist(r.Context(), webCaller(r.Context(), acct.ID), ref, key)
	switch {
	case err == nil && strings.Contains(out.Summary, "passed on"):
		notice = "You left the waitlist; the time held for you goes to the next person waiting."
	case err == nil:
	case problem.CodeOf(err) == problem.CodeNotFound || problem.CodeOf(err) == problem.CodeConflict:
		notice = "You were no longer on that waitlist; nothing changed."
	default:
		u.serverError(w, r, err)
		return
	}
	d := bookingsData{Status: "waitlisted"}
	for _, t := range bookingTabs {
		d.Tabs = append(d.Tabs, bookingTab{Status: t.Status, Label: t.Label, URL: bookingsURL(t.Status, 1), Current: t.Status == "waitlisted"})
		if t.Status == "waitlisted" {
			d.Empty = t.Empty
		}
	}
	u.waitlistTab(w, r, acct, d, 1, notice)
}
