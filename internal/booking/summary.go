package booking

import (
	"fmt"
	"strings"
	"time"
)

// money renders cents in a currency: "USD 45.00".
func money(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s %s%d.%02d", currency, sign, cents/100, cents%100)
}

// localSpan renders "Tuesday 3 March 2026, 10:00–10:45 (America/New_York, UTC-05:00)".
func localSpan(start, end time.Time, zone string) string {
	return fmt.Sprintf("%s, %s–%s (%s, UTC%s)", start.Format("Monday 2 January 2006"),
		start.Format("15:04"), end.Format("15:04"), zone, start.Format("-07:00"))
}

// Text renders the human-readable confirmation summary. It is deterministic:
// the same facts always give the same text.
func (f Facts) Text() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	switch f.Action {
	case "create":
		line("Book %s at %s.", f.ServiceName, f.BusinessName)
	case "reschedule":
		line("Move booking %s (%s at %s).", f.BookingReference, f.ServiceName, f.BusinessName)
	case "cancel":
		line("Cancel booking %s (%s at %s).", f.BookingReference, f.ServiceName, f.BusinessName)
	}
	if f.BusinessAddress != "" {
		line("Where: %s", f.BusinessAddress)
	}
	if f.Action == "reschedule" {
		line("From: %s with %s", localSpan(f.PreviousStartsAt, f.PreviousEndsAt, f.TimeZone), f.PreviousStaffName)
		line("To: %s with %s", localSpan(f.StartsAt, f.EndsAt, f.TimeZone), f.StaffName)
	} else {
		line("When: %s", localSpan(f.StartsAt, f.EndsAt, f.TimeZone))
		line("With: %s", f.StaffName)
	}
	line("Price: %s (catalog price, paid at the business)", money(f.PriceCents, f.Currency))
	if f.CancellationPolicy != "" {
		line("Cancellation policy: %s", f.CancellationPolicy)
	}
	if f.CancellationFeeCents > 0 && f.CancellationWindowMinutes > 0 {
		line("Cancellation fee: %s when cancelled less than %s before the start.",
			money(f.CancellationFeeCents, f.Currency), humanMinutes(f.CancellationWindowMinutes))
	} else {
		line("Cancellation fee: none.")
	}
	if f.Action == "cancel" {
		if f.FeeNow > 0 {
			line("Cancelling now costs %s.", money(f.FeeNow, f.Currency))
		} else {
			line("Cancelling now costs nothing.")
		}
		if f.Reason != "" {
			line("Reason given: %s", f.Reason)
		}
	}
	if f.Action == "create" {
		if f.Notes != "" {
			line("Notes for the business: %s", f.Notes)
		}
		notice := f.PrivacyNotice
		if notice == "" {
			notice = "Your name, email and any notes are shared with the business to manage this appointment."
		}
		line("Privacy: %s Notes are visible to the business.", strings.TrimSpace(notice))
	}
	return strings.TrimRight(b.String(), "\n")
}

func humanMinutes(m int) string {
	switch {
	case m%(24*60) == 0:
		if m == 24*60 {
			return "24 hours"
		}
		return fmt.Sprintf("%d days", m/(24*60))
	case m%60 == 0:
		if m == 60 {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", m/60)
	}
	return fmt.Sprintf("%d minutes", m)
}
