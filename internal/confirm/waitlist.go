package confirm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/linkslot/linkslot/internal/booking"
)

// ForCallback renders the summary of a callback request: the business, the
// topic, the person's preferred times and notes (quoted: every character
// is theirs), and the address the business will answer — the account's
// verified one.
func ForCallback(f booking.CallbackFacts) (string, error) {
	if f.BusinessName == "" || f.Topic == "" || f.ContactEmail == "" {
		return "", errIncomplete
	}
	var s summary
	s.line("Ask this business to contact you:")
	where := oneLine(f.BusinessName)
	if f.BusinessAddress != "" {
		where += ", " + oneLine(f.BusinessAddress)
	}
	s.line("Business: %s", where)
	s.line("Topic: %s", strconv.Quote(f.Topic))
	if strings.TrimSpace(f.PreferredTimes) != "" {
		s.line("Preferred times: %s", strconv.Quote(f.PreferredTimes))
	} else {
		s.line("Preferred times: none given")
	}
	if strings.TrimSpace(f.Notes) != "" {
		s.line("Notes for the business: %s", strconv.Quote(f.Notes))
	} else {
		s.line("Notes for the business: none")
	}
	s.line("Contact: the business will see your account's e-mail address, %s, and answer you there.", f.ContactEmail)
	s.line("Nothing is booked; %s decides when and whether to get back to you.", oneLine(f.BusinessName))
	return s.String(), nil
}

// ForWaitlist renders the summary of joining a waitlist: what is waited
// for, the window, and what happens when a matching time frees.
func ForWaitlist(f booking.WaitlistFacts) (string, error) {
	if f.BusinessName == "" || f.ServiceName == "" || f.TimeZone == "" || f.FromDate == "" || f.ToDate == "" {
		return "", errIncomplete
	}
	var s summary
	s.line("Join the waitlist:")
	where := oneLine(f.BusinessName)
	if f.BusinessAddress != "" {
		where += ", " + oneLine(f.BusinessAddress)
	}
	s.line("Business: %s", where)
	s.line("Service: %s (%d minutes, %s, paid at the business)", oneLine(f.ServiceName), f.DurationMinutes, Money{Cents: f.PriceCents, Currency: f.Currency})
	if f.StaffName != "" {
		s.line("With: %s only", oneLine(f.StaffName))
	} else {
		s.line("With: anyone who performs it")
	}
	days := f.FromDate
	if f.ToDate != f.FromDate {
		days = fmt.Sprintf("%s to %s", f.FromDate, f.ToDate)
	}
	s.line("Dates: %s (%s)", days, f.TimeZone)
	s.line("Time of day: between %s and %s", f.Earliest, f.Latest)
	s.line("When a matching time frees up and you are first in line, it is held for you for %d minutes and you get an e-mail; it is booked only if you book it with its offer in that time. An unused offer passes to the next person.", f.OfferMinutes)
	s.line("Joining books nothing; you can leave the waitlist any time on My bookings.")
	return s.String(), nil
}
