package confirm

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
)

// ForBooking renders the summary a person confirms from the booking
// engine's plan facts: the one mapping from booking.Facts to this package's
// builders. Same facts, same bytes.
func ForBooking(f booking.Facts) (string, error) {
	loc := f.StartsAt.Location()
	if f.TimeZone != "" {
		if l, err := time.LoadLocation(f.TimeZone); err == nil {
			loc = l
		}
	}
	appt := func(staff string, start, end time.Time) Appointment {
		return Appointment{BusinessName: f.BusinessName, BusinessAddress: f.BusinessAddress, ServiceName: f.ServiceName,
			StaffName: staff, Start: start, End: end, Location: loc, Price: Money{Cents: f.PriceCents, Currency: f.Currency}}
	}
	pol := Policy{Text: f.CancellationPolicy, LateWindow: time.Duration(f.CancellationWindowMinutes) * time.Minute,
		Fee: Money{Cents: f.CancellationFeeCents, Currency: f.Currency}}
	switch f.Action {
	case "create":
		return CreateSummary(CreateFacts{Appointment: appt(f.StaffName, f.StartsAt, f.EndsAt), Policy: pol,
			Notes: f.Notes, PrivacyNotice: f.PrivacyNotice, NeedsConfirmation: f.RequiresConfirmation, Window: f.ConfirmationWindow})
	case "reschedule":
		return RescheduleSummary(RescheduleFacts{BookingReference: f.BookingReference,
			From: appt(f.PreviousStaffName, f.PreviousStartsAt, f.PreviousEndsAt), To: appt(f.StaffName, f.StartsAt, f.EndsAt), Policy: pol})
	case "cancel":
		return CancelSummary(CancelFacts{BookingReference: f.BookingReference, Appointment: appt(f.StaffName, f.StartsAt, f.EndsAt),
			Policy: pol, FeeNow: Money{Cents: f.FeeNow, Currency: f.Currency}, Reason: f.Reason})
	}
	return "", fmt.Errorf("confirm: no summary for action %q", f.Action)
}

// ForBusiness renders what a business action did, in the words the
// person's Activity page and the stored answer keep: the booking, the
// appointment, who acted and the reason given.
func ForBusiness(f booking.Facts, status string) (string, error) {
	loc := f.StartsAt.Location()
	if f.TimeZone != "" {
		if l, err := time.LoadLocation(f.TimeZone); err == nil {
			loc = l
		}
	}
	a := Appointment{BusinessName: f.BusinessName, BusinessAddress: f.BusinessAddress, ServiceName: f.ServiceName,
		StaffName: f.StaffName, Start: f.StartsAt, End: f.EndsAt, Location: loc, Price: Money{Cents: f.PriceCents, Currency: f.Currency}}
	if f.BookingReference == "" {
		return "", errIncomplete
	}
	if err := a.check(); err != nil {
		return "", err
	}
	var what string
	switch status {
	case "confirmed":
		what = "confirmed by the business"
	case "declined":
		what = "declined by the business"
	case "cancelled":
		what = "cancelled by the business"
	case "completed":
		what = "marked completed by the business"
	case "no_show":
		what = "marked a no-show by the business"
	default:
		return "", fmt.Errorf("confirm: no business summary for status %q", status)
	}
	var s summary
	s.line("Booking %s %s:", oneLine(f.BookingReference), what)
	s.appointment(a)
	if actor := oneLine(f.Actor); actor != "" {
		s.line("By: %s", actor)
	}
	if strings.TrimSpace(f.Reason) != "" {
		s.line("Reason given: %s", strconv.Quote(f.Reason))
	}
	return s.String(), nil
}
