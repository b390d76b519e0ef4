package notify

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textout"
)

// letter is one e-mail's subject and bodies.
type letter struct {
	subject, text, html string
}

type letters struct {
	person, business letter
}

// fact is one line of an e-mail: a label and its value, the same in the
// text and the HTML part.
type fact struct{ Label, Value string }

// letters writes the person's and the business's e-mails about a change,
// with the facts of the summary the person confirmed: business and address,
// service, staff member, local time with the zone's name, price,
// cancellation terms, notes or reason.
func (n *Notifier) letters(c Change, v booking.BookingView, customer string) letters {
	f := c.Facts
	loc := v.StartsAt.Location()
	when := confirm.LocalSpan(v.StartsAt, v.EndsAt, loc)
	short := v.StartsAt.Format("Mon 2 Jan 15:04")
	price := confirm.Money{Cents: v.PriceCents, Currency: v.Currency}
	where := oneLine(f.BusinessName)
	if f.BusinessAddress != "" {
		where += ", " + oneLine(f.BusinessAddress)
	}
	common := []fact{{"Booking", v.Reference}, {"Business", where}, {"Service", oneLine(v.ServiceName)}, {"With", oneLine(v.StaffName)}}
	var personIntro, bizIntro, verb string
	var facts []fact
	switch f.Action {
	case "create":
		verb = "Booked"
		personIntro = "Your booking is confirmed."
		bizIntro = "A new booking was made through Linkslot."
		facts = append(common, fact{"When", when}, fact{"Price", price.String() + " (catalog price, paid at the business)"},
			fact{"Cancellation", cancellation(f, v.StartsAt, loc)})
		if v.Status == store.BookingPending && v.RespondBy != nil {
			verb = "Requested"
			by := confirm.LocalInstant(*v.RespondBy, loc)
			personIntro = "Your booking request is pending: " + oneLine(v.BusinessName) + " will confirm or decline it by " + by + ". The time is held for you until then."
			bizIntro = "A booking through Linkslot needs your answer: confirm or decline it in the business console by " + by + ", or it is declined automatically."
			facts = append(facts, fact{"Answer by", by})
		}
		if strings.TrimSpace(f.Notes) != "" {
			facts = append(facts, fact{"Notes for the business", quoted(f.Notes)})
		}
	case "reschedule":
		verb = "Moved"
		personIntro = "Your booking has moved to a new time."
		bizIntro = "A booking was moved through Linkslot."
		from := confirm.LocalSpan(f.PreviousStartsAt, f.PreviousEndsAt, loc)
		if f.PreviousStaffName != "" && f.PreviousStaffName != v.StaffName {
			from += " with " + oneLine(f.PreviousStaffName)
		}
		facts = append(common, fact{"New time", when}, fact{"Was", from},
			fact{"Price", price.String() + " (catalog price, paid at the business)"},
			fact{"Cancellation", cancellation(f, v.StartsAt, loc)})
	case booking.BusinessConfirm:
		verb = "Confirmed"
		personIntro = oneLine(v.BusinessName) + " confirmed your booking."
		bizIntro = "A pending booking was confirmed" + byWhom(f) + "."
		facts = append(common, fact{"When", when}, fact{"Price", price.String() + " (catalog price, paid at the business)"},
			fact{"Cancellation", cancellation(f, v.StartsAt, loc)})
	case booking.BusinessDecline:
		verb = "Declined"
		personIntro = oneLine(v.BusinessName) + " declined your booking request; the time is no longer held for you."
		bizIntro = "A pending booking was declined" + byWhom(f) + "."
		facts = append(common, fact{"Was", when})
		if strings.TrimSpace(f.Reason) != "" {
			facts = append(facts, fact{"Reason given", quoted(f.Reason)})
		}
	case booking.BusinessComplete, booking.BusinessNoShow:
		verb = "Completed"
		if f.Action == booking.BusinessNoShow {
			verb = "No-show"
		}
		bizIntro = "A booking was marked " + strings.ToLower(verb) + byWhom(f) + "."
		facts = append(common, fact{"When", when})
	case "cancel":
		verb = "Cancelled"
		personIntro = "Your booking is cancelled."
		bizIntro = "A booking was cancelled through Linkslot."
		if f.Actor != "" {
			personIntro = oneLine(v.BusinessName) + " cancelled your booking."
			bizIntro = "A booking was cancelled" + byWhom(f) + "."
		}
		facts = append(common, fact{"Was", when})
		fee := "none"
		if v.CancellationFeeCents > 0 {
			fee = confirm.Money{Cents: v.CancellationFeeCents, Currency: v.Currency}.String() + " (settled with the business; nothing is charged here)"
		}
		facts = append(facts, fact{"Cancellation fee", fee})
		if strings.TrimSpace(f.Reason) != "" {
			facts = append(facts, fact{"Reason given", quoted(f.Reason)})
		}
	}
	subject := fmt.Sprintf("%s: %s at %s, %s", verb, oneLine(v.ServiceName), oneLine(v.BusinessName), short)
	personOutro := []string{
		"Your calendar invitation is attached; it updates the same event if the booking moves or is cancelled.",
		"To change this booking, ask the app you booked with, or visit " + n.issuer + "/account.",
	}
	customer = oneLine(customer)
	bizFacts := append([]fact{{"Customer", customer}}, facts...)
	bizOutro := []string{"The calendar invitation attached keeps this appointment up to date in your calendar."}
	return letters{
		person:   render(subject, personIntro, facts, personOutro),
		business: render(subject+" ("+customer+")", bizIntro, bizFacts, bizOutro),
	}
}

// byWhom names the member who acted in the business's letter.
func byWhom(f booking.Facts) string {
	if a := oneLine(f.Actor); a != "" {
		return " by " + a + " in the business console"
	}
	return " (no answer came in time)"
}

// cancellation renders the business's cancellation terms, as the summary
// does.
func cancellation(f booking.Facts, start time.Time, loc *time.Location) string {
	s := confirm.CancellationTerms(confirm.Policy{Fee: confirm.Money{Cents: f.CancellationFeeCents, Currency: f.Currency},
		LateWindow: time.Duration(f.CancellationWindowMinutes) * time.Minute}, start, loc)
	if p := oneLine(f.CancellationPolicy); p != "" {
		s += " " + p
	}
	return s
}

func oneLine(s string) string { return textout.OneLine(s) }

// quoted is a person's own words (notes, a reason) in a letter: in
// quotation marks, its lines kept as lines (textout.Lines) and indented
// under the first, blank lines and control characters gone.
func quoted(s string) string {
	var lines []string
	for _, l := range strings.Split(textout.Lines(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return "“" + strings.Join(lines, "\n    ") + "”"
}

var htmlLetter = template.Must(template.New("letter").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Subject}}</title></head>
<body style="font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; color: #1a1a1a; line-height: 1.45">
<p style="font-size: 1.1em"><strong>{{.Intro}}</strong></p>
<table style="border-collapse: collapse">
{{range .Facts}}<tr><th style="text-align: left; vertical-align: top; padding: 2px 12px 2px 0; color: #555">{{.Label}}</th><td style="padding: 2px 0">{{.Value}}</td></tr>
{{end}}</table>
{{range .Outro}}<p>{{.}}</p>
{{end}}</body></html>
`))

func render(subject, intro string, facts []fact, outro []string) letter {
	var t strings.Builder
	t.WriteString(intro + "\n\n")
	for _, f := range facts {
		fmt.Fprintf(&t, "%s: %s\n", f.Label, f.Value)
	}
	for _, o := range outro {
		t.WriteString("\n" + o + "\n")
	}
	var h bytes.Buffer
	_ = htmlLetter.Execute(&h, struct {
		Subject, Intro string
		Facts          []fact
		Outro          []string
	}{subject, intro, facts, outro})
	return letter{subject: subject, text: t.String(), html: h.String()}
}
