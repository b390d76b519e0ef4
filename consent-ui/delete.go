package consentui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// deletionConfirmation is what the person agreed to, recorded with each
// cancellation their deletion makes.
const deletionConfirmation = "I deleted my Linkslot account: cancel my upcoming bookings."

type deleteData struct {
	Upcoming []string      // one line per upcoming booking
	Passkey  *ceremonyView // "Delete with a passkey", when the account has one
}

func (u *UI) upcoming(ctx context.Context, accountID string) ([]store.Booking, error) {
	return u.store.ListAccountBookings(ctx, store.BookingFilter{AccountID: accountID, Status: "upcoming", Now: u.clock(), Limit: 500})
}

func (u *UI) deletePage(w http.ResponseWriter, r *http.Request, status int, acct store.Account, errMsg string) {
	ups, err := u.upcoming(r.Context(), acct.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	var d deleteData
	cats := map[string]store.Catalog{}
	for _, b := range ups {
		c, err := u.catalogOf(r.Context(), cats, b.BusinessID)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		e := bookingExport(c, b)
		when := b.StartsAt
		if loc, err := time.LoadLocation(c.Business.TimeZone); err == nil {
			when = when.In(loc)
		}
		d.Upcoming = append(d.Upcoming, fmt.Sprintf("%s at %s, %s (%s)", e.Service, e.Business, when.Format("Mon 2 Jan 2006, 15:04"), c.Business.TimeZone))
	}
	if d.Passkey, err = u.deleteCeremony(r, acct); err != nil {
		u.serverError(w, r, err)
		return
	}
	u.render(w, r, status, "delete", view{Title: "Delete your account", Nav: "account", Account: &acct, CSRF: u.CSRFToken(w, r),
		Error: errMsg, Data: d}, nil)
}

func (u *UI) getDelete(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	u.deletePage(w, r, http.StatusOK, acct, "")
}

func (u *UI) postDelete(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		u.deletePage(w, r, http.StatusUnprocessableEntity, acct, "Nothing was deleted. Tick the box to confirm that you want your account deleted for good.")
		return
	}
	// Confirmed with a passkey (the script filled in its answer) or with
	// the password.
	if r.PostFormValue("credential") != "" {
		if !u.passkeyConfirms(w, r, acct) {
			return
		}
	} else if !u.passwordConfirms(w, r, acct) {
		return
	}
	if msg, err := u.cancelUpcoming(r.Context(), acct); err != nil {
		u.serverError(w, r, err)
		return
	} else if msg != "" {
		u.deletePage(w, r, http.StatusConflict, acct, msg)
		return
	}
	if err := u.store.EraseAccount(r.Context(), acct.ID, u.clock()); err != nil {
		u.serverError(w, r, err)
		return
	}
	u.log.InfoContext(r.Context(), "consent-ui: account deleted", "account_id", acct.ID)
	u.clearCookie(w, u.sessionCookie)
	r.Header.Del("Cookie")
	u.linkPage(w, r, http.StatusOK, linkData{Title: "Your account was deleted",
		Message: "Your Linkslot account and its personal data are gone, your apps are disconnected and your upcoming bookings are cancelled. " +
			"Thank you for using Linkslot.", Continue: "/signup", ContinueText: "Create a new account"})
}

// passwordConfirms checks the password a person confirmed a deletion
// with; on refusal it shows the delete page again and answers false.
func (u *UI) passwordConfirms(w http.ResponseWriter, r *http.Request, acct store.Account) bool {
	err := u.id.Reauthenticate(r.Context(), acct.ID, r.PostFormValue("password"), u.clientAddr(r))
	wait, throttled := identity.RetryAfter(err)
	switch {
	case err == nil:
		return true
	case errors.Is(err, identity.ErrWrongPassword):
		u.deletePage(w, r, http.StatusUnprocessableEntity, acct, "Nothing was deleted: the password is not correct.")
	case throttled:
		setThrottledRetryAfter(w, wait)
		u.deletePage(w, r, http.StatusTooManyRequests, acct, "Nothing was deleted. Too many wrong passwords: wait "+identity.HumanDuration(wait)+" and try again.")
	case errors.Is(err, identity.ErrBusy):
		u.busy(w, r)
		u.deletePage(w, r, http.StatusServiceUnavailable, acct, msgBusy)
	default:
		u.serverError(w, r, err)
	}
	return false
}

// cancelUpcoming cancels every upcoming booking of the account through the
// mutation service, as the person on the web, confirming the summary the
// service computes (so each business is notified and the policy applies).
// A booking that cannot be cancelled here answers a message for the
// person, and the account is kept.
func (u *UI) cancelUpcoming(ctx context.Context, acct store.Account) (string, error) {
	ups, err := u.upcoming(ctx, acct.ID)
	if err != nil || len(ups) == 0 {
		return "", err
	}
	if u.mut == nil {
		return "", errors.New("consentui: upcoming bookings to cancel, and no mutation service")
	}
	caller := webCaller(ctx, acct.ID)
	for _, b := range ups {
		req := mutation.CancelRequest{BookingRef: b.Reference, Reason: "The person deleted their Linkslot account."}
		preview, err := u.mut.Cancel(ctx, caller, req, mutation.Confirmation{})
		if err != nil {
			return cancelRefused(b, err)
		}
		if preview.AlreadyCancelled {
			continue
		}
		yes, sum, text, key := true, preview.Summary, deletionConfirmation, "account-deletion-"+b.ID
		out, err := u.mut.Cancel(ctx, caller, req, mutation.Confirmation{ConfirmedSummary: &sum, SummaryPresented: &yes,
			ConfirmationObtained: &yes, UserConfirmationText: &text, IdempotencyKey: &key})
		if err != nil {
			return cancelRefused(b, err)
		}
		if out.Status != mutation.StatusCancelled {
			return "Nothing was deleted: one of your bookings changed while we were cancelling it. Please try again.", nil
		}
	}
	return "", nil
}

// cancelRefused is cancelUpcoming's answer when the mutation service
// refuses to cancel b: a message for the person when the refusal is a
// problem they can read, else the error.
func cancelRefused(b store.Booking, err error) (string, error) {
	var pe *problem.Error
	if errors.As(err, &pe) {
		return fmt.Sprintf("Nothing was deleted: booking %s cannot be cancelled here (%s). Contact the business, then try again.", b.Reference, pe.Message), nil
	}
	return "", err
}
