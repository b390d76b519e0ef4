package confirm

import (
	"fmt"
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
			Notes: f.Notes, PrivacyNotice: f.PrivacyNotice})
	case "reschedule":
		return RescheduleSummary(RescheduleFacts{BookingReference: f.BookingReference,
			From: appt(f.PreviousStaffName, f.PreviousStartsAt, f.PreviousEndsAt), To: appt(f.StaffName, f.StartsAt, f.EndsAt), Policy: pol})
	case "cancel":
		return CancelSummary(CancelFacts{BookingReference: f.BookingReference, Appointment: appt(f.StaffName, f.StartsAt, f.EndsAt),
			Policy: pol, FeeNow: Money{Cents: f.FeeNow, Currency: f.Currency}, Reason: f.Reason})
	}
	return "", fmt.Errorf("confirm: no summary for action %q", f.Action)
}
