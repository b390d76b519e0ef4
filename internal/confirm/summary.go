package confirm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Money is an amount in the minor unit of an ISO 4217 currency.
type Money struct {
	Cents    int64
	Currency string
}

// String renders "USD 45.00" (no decimals for zero-decimal currencies such as
// JPY, three for BHD and the like).
func (m Money) String() string {
	digits := 2
	switch m.Currency {
	case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF":
		digits = 0
	case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
		digits = 3
	}
	c, sign := m.Cents, ""
	if c < 0 {
		c, sign = -c, "-"
	}
	if digits == 0 {
		return fmt.Sprintf("%s %s%d", m.Currency, sign, c)
	}
	unit := int64(100)
	if digits == 3 {
		unit = 1000
	}
	return fmt.Sprintf("%s %s%d.%0*d", m.Currency, sign, c/unit, digits, c%unit)
}

// Appointment is one appointment as a person sees it.
type Appointment struct {
	BusinessName    string
	BusinessAddress string // optional
	ServiceName     string
	StaffName       string
	Start, End      time.Time
	// Location is the business's time zone; times are shown in it with its
	// IANA name and abbreviation.
	Location *time.Location
	// Price is the catalog price, paid at the business.
	Price Money
}

// Policy is a business's cancellation policy.
type Policy struct {
	Text string // the business's own words; optional
	// LateWindow: cancelling less than this before the start costs Fee.
	LateWindow time.Duration
	Fee        Money // zero Cents: no fee
}

// CreateFacts are what a new booking's summary shows.
type CreateFacts struct {
	Appointment
	Policy        Policy
	Notes         string // the person's notes for the business, may be empty
	PrivacyNotice string // the business's privacy notice, optional
	// NeedsConfirmation: the service requires the business's confirmation;
	// the booking is pending until it answers, within Window of booking and
	// before the start.
	NeedsConfirmation bool
	Window            time.Duration
}

// RescheduleFacts are what a move's summary shows. From and To share the
// business, service and price; the staff member may differ.
type RescheduleFacts struct {
	BookingReference string
	From, To         Appointment
	Policy           Policy
}

// CancelFacts are what a cancellation's summary shows.
type CancelFacts struct {
	BookingReference string
	Appointment
	Policy Policy
	// FeeNow is the fee this cancellation costs if made now (zero: free).
	FeeNow Money
	Reason string // optional
}

var errIncomplete = errors.New("confirm: summary facts lack a business, service, staff, time or zone")

func (a Appointment) check() error {
	if a.BusinessName == "" || a.ServiceName == "" || a.StaffName == "" || a.Location == nil ||
		a.Start.IsZero() || !a.End.After(a.Start) || a.Price.Currency == "" {
		return errIncomplete
	}
	return nil
}

// LocalSpan renders an appointment's time in its zone:
// "Tuesday 8 December 2026, 10:00–10:45 (America/New_York, EST)".
func LocalSpan(start, end time.Time, loc *time.Location) string {
	s, e := start.In(loc), end.In(loc)
	zone := s.Format("MST")
	if ez := e.Format("MST"); ez != zone {
		zone += "→" + ez
	}
	endText := e.Format("15:04")
	if e.YearDay() != s.YearDay() || e.Year() != s.Year() {
		endText = e.Format("Monday 2 January 2006, 15:04")
	}
	return fmt.Sprintf("%s, %s–%s (%s, %s)", s.Format("Monday 2 January 2006"), s.Format("15:04"), endText, loc.String(), zone)
}

// LocalInstant renders one instant as summaries and e-mails show it:
// "Monday 7 December 2026, 10:00 (America/New_York, EST)".
func LocalInstant(t time.Time, loc *time.Location) string { return localInstant(t, loc) }

// localInstant renders one instant: "Monday 7 December 2026, 10:00 (America/New_York, EST)".
func localInstant(t time.Time, loc *time.Location) string {
	l := t.In(loc)
	return fmt.Sprintf("%s (%s, %s)", l.Format("Monday 2 January 2006, 15:04"), loc.String(), l.Format("MST"))
}

// summary is a line builder.
type summary struct{ b strings.Builder }

func (s *summary) line(format string, args ...any) {
	fmt.Fprintf(&s.b, format, args...)
	s.b.WriteByte('\n')
}

func (s *summary) String() string { return strings.TrimRight(s.b.String(), "\n") }

// oneLine keeps the business's free text on one line so that a summary's
// layout cannot be forged by the text it quotes. The person's own text (notes,
// reason) is quoted with strconv.Quote instead, so every character of it
// counts.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (s *summary) appointment(a Appointment) {
	where := oneLine(a.BusinessName)
	if a.BusinessAddress != "" {
		where += ", " + oneLine(a.BusinessAddress)
	}
	s.line("Business: %s", where)
	s.line("Service: %s", oneLine(a.ServiceName))
	s.line("With: %s", oneLine(a.StaffName))
	s.line("When: %s", LocalSpan(a.Start, a.End, a.Location))
	s.line("Price: %s (catalog price, paid at the business; nothing is charged here)", a.Price)
}

// Duration renders a confirmation window: "24 hours", "90 minutes", "2 days".
func Duration(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return plural(int64(d/(24*time.Hour)), "day")
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	}
	return plural(int64(d/time.Minute), "minute")
}

// CancellationTerms is the summary's sentence on what cancelling an
// appointment starting at start costs, without its "Cancellation:" label
// (the booking e-mails repeat it).
func CancellationTerms(p Policy, start time.Time, loc *time.Location) string {
	switch {
	case p.Fee.Cents > 0 && p.LateWindow > 0:
		return fmt.Sprintf("free until %s; after that, cancelling costs %s.", localInstant(start.Add(-p.LateWindow), loc), p.Fee)
	case p.Fee.Cents > 0:
		return fmt.Sprintf("cancelling costs %s.", p.Fee)
	}
	return "free until the appointment starts."
}

func (s *summary) policy(p Policy, start time.Time, loc *time.Location) {
	s.line("Cancellation: %s", CancellationTerms(p, start, loc))
	if t := oneLine(p.Text); t != "" {
		s.line("Cancellation policy: %s", t)
	}
}

// CreateSummary renders the summary of a new booking.
func CreateSummary(f CreateFacts) (string, error) {
	if err := f.check(); err != nil {
		return "", err
	}
	var s summary
	if f.NeedsConfirmation {
		s.line("Request this appointment (the business must confirm it):")
	} else {
		s.line("Book this appointment:")
	}
	s.appointment(f.Appointment)
	if f.NeedsConfirmation {
		s.line("Confirmation: %s confirms or declines this request within %s of it being made, and before the appointment starts; until then it is pending and the time is held. Unanswered by then, it is declined.",
			oneLine(f.BusinessName), Duration(f.Window))
	}
	s.policy(f.Policy, f.Start, f.Location)
	if strings.TrimSpace(f.Notes) != "" {
		s.line("Notes for the business: %s", strconv.Quote(f.Notes))
	} else {
		s.line("Notes for the business: none")
	}
	privacy := "Privacy: notes are visible to " + oneLine(f.BusinessName) + "; do not include anything you would not tell them."
	if p := oneLine(f.PrivacyNotice); p != "" {
		privacy += " " + p
	}
	s.line("%s", privacy)
	return s.String(), nil
}

// RescheduleSummary renders the summary of a move.
func RescheduleSummary(f RescheduleFacts) (string, error) {
	if f.BookingReference == "" {
		return "", errIncomplete
	}
	if err := f.From.check(); err != nil {
		return "", err
	}
	if err := f.To.check(); err != nil {
		return "", err
	}
	var s summary
	s.line("Move booking %s:", oneLine(f.BookingReference))
	where := oneLine(f.To.BusinessName)
	if f.To.BusinessAddress != "" {
		where += ", " + oneLine(f.To.BusinessAddress)
	}
	s.line("Business: %s", where)
	s.line("Service: %s", oneLine(f.To.ServiceName))
	s.line("From: %s with %s", LocalSpan(f.From.Start, f.From.End, f.From.Location), oneLine(f.From.StaffName))
	s.line("To: %s with %s", LocalSpan(f.To.Start, f.To.End, f.To.Location), oneLine(f.To.StaffName))
	s.line("Price: %s (catalog price, paid at the business; nothing is charged here)", f.To.Price)
	s.policy(f.Policy, f.To.Start, f.To.Location)
	s.line("The original time is released only if the move succeeds.")
	return s.String(), nil
}

// CancelSummary renders the summary of a cancellation.
func CancelSummary(f CancelFacts) (string, error) {
	if f.BookingReference == "" {
		return "", errIncomplete
	}
	if err := f.check(); err != nil {
		return "", err
	}
	var s summary
	s.line("Cancel booking %s:", oneLine(f.BookingReference))
	s.appointment(f.Appointment)
	s.policy(f.Policy, f.Start, f.Location)
	if f.FeeNow.Cents > 0 {
		s.line("Fee if cancelled now: %s (settled with the business; nothing is charged here).", f.FeeNow)
	} else {
		s.line("Fee if cancelled now: none.")
	}
	if strings.TrimSpace(f.Reason) != "" {
		s.line("Reason given: %s", strconv.Quote(f.Reason))
	}
	return s.String(), nil
}
