// Package ical writes the iCalendar (RFC 5545) objects Linkslot sends:
// invitations attached to booking e-mails (METHOD:REQUEST or CANCEL, one
// event per booking) and private calendar feeds (many events).
//
// Objects are built with github.com/arran4/golang-ical, never by string
// concatenation. Times are written as local times with the business's TZID,
// and every TZID used is defined by a VTIMEZONE generated from Go's zone
// database: one observance per offset change around the events (a year
// either side), so a calendar converts each local time to the right instant
// on both sides of a daylight-saving change.
//
// A calendar updates one event instead of adding several because every
// object for a booking carries the same UID (REFERENCE@ISSUER-HOST) and a
// SEQUENCE that rises with the booking's version.
package ical

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/linkslot/linkslot/internal/textout"
)

// Person is an organizer or attendee.
type Person struct {
	Name  string
	Email string
}

// Event is one booking as a calendar shows it.
type Event struct {
	UID         string // REFERENCE@ISSUER-HOST
	Sequence    int    // the booking's version
	Summary     string // "SERVICE at BUSINESS"
	Location    string // the business's address
	Description string
	Start, End  time.Time
	Zone        *time.Location // the business's zone (its name is the TZID)
	Cancelled   bool
	// Tentative marks a booking the business has yet to confirm
	// (STATUS:TENTATIVE).
	Tentative bool
	// Alarms are the reminders before the start, one VALARM each
	// (docs/calendars.md, "Reminders").
	Alarms    []time.Duration
	Organizer Person
	Attendees []Person
	Stamp     time.Time // when this version of the object was made (DTSTAMP)
}

// Methods of an invitation (RFC 5546).
const (
	MethodRequest = "REQUEST"
	MethodCancel  = "CANCEL"
)

const prodID = "-//Linkslot//Linkslot bookings//EN"

var errEvent = errors.New("ical: an event needs a UID, a zone and a start before its end")

// Invitation renders a one-event iTIP object with method REQUEST or CANCEL.
func Invitation(method string, e Event) (string, error) {
	if method != MethodRequest && method != MethodCancel {
		return "", fmt.Errorf("ical: unknown method %q", method)
	}
	cal := ics.NewCalendarFor("Linkslot")
	cal.SetProductId(prodID)
	cal.SetMethod(ics.Method(method))
	if err := addEvents(cal, []Event{e}); err != nil {
		return "", err
	}
	return cal.Serialize(ics.WithNewLineWindows), nil
}

// Object renders a one-event calendar object without a method, as stored
// in a CalDAV collection (RFC 4791 §4.1).
func Object(e Event) (string, error) {
	cal := ics.NewCalendarFor("Linkslot")
	cal.SetProductId(prodID)
	if err := addEvents(cal, []Event{e}); err != nil {
		return "", err
	}
	return cal.Serialize(ics.WithNewLineWindows), nil
}

// Feed renders a calendar of many events (a subscription feed, no method).
func Feed(name string, events []Event) (string, error) {
	cal := ics.NewCalendarFor("Linkslot")
	cal.SetProductId(prodID)
	cal.SetXWRCalName(oneLine(name))
	cal.SetName(oneLine(name))
	cal.SetRefreshInterval("PT1H")
	if err := addEvents(cal, events); err != nil {
		return "", err
	}
	return cal.Serialize(ics.WithNewLineWindows), nil
}

func addEvents(cal *ics.Calendar, events []Event) error {
	spans := map[string][2]time.Time{}
	zones := map[string]*time.Location{}
	for _, e := range events {
		if e.UID == "" || e.Zone == nil || !e.End.After(e.Start) {
			return errEvent
		}
		name := e.Zone.String()
		sp, ok := spans[name]
		if !ok || e.Start.Before(sp[0]) {
			sp[0] = e.Start
		}
		if !ok || e.End.After(sp[1]) {
			sp[1] = e.End
		}
		spans[name], zones[name] = sp, e.Zone
	}
	names := make([]string, 0, len(zones))
	for n := range zones {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		cal.AddVTimezone(Timezone(zones[n], spans[n][0], spans[n][1]))
	}
	for _, e := range events {
		ev := cal.AddEvent(oneLine(e.UID))
		ev.SetDtStampTime(e.Stamp)
		ev.SetSequence(e.Sequence)
		tz := ics.WithTZID(e.Zone.String())
		ev.SetProperty(ics.ComponentPropertyDtStart, e.Start.In(e.Zone).Format(localFormat), tz)
		ev.SetProperty(ics.ComponentPropertyDtEnd, e.End.In(e.Zone).Format(localFormat), tz)
		ev.SetSummary(oneLine(e.Summary))
		if e.Location != "" {
			ev.SetLocation(oneLine(e.Location))
		}
		if e.Description != "" {
			ev.SetDescription(Text(e.Description))
		}
		if e.Cancelled {
			ev.SetStatus(ics.ObjectStatusCancelled)
		} else if e.Tentative {
			ev.SetStatus(ics.ObjectStatusTentative)
		} else {
			ev.SetStatus(ics.ObjectStatusConfirmed)
		}
		ev.SetProperty(ics.ComponentPropertyTransp, "OPAQUE")
		if e.Organizer.Email != "" {
			ev.SetOrganizer("mailto:"+address(e.Organizer.Email), ics.WithCN(paramText(e.Organizer.Name)))
		}
		for _, a := range e.Attendees {
			params := []ics.PropertyParameter{ics.WithRSVP(false), ics.ParticipationStatusAccepted, ics.ParticipationRoleReqParticipant}
			if a.Name != "" {
				params = append(params, ics.WithCN(paramText(a.Name)))
			}
			ev.AddAttendee("mailto:"+address(a.Email), params...)
		}
		if !e.Cancelled {
			for _, d := range e.Alarms {
				al := ev.AddAlarm()
				al.SetAction(ics.ActionDisplay)
				al.SetTrigger(Trigger(d))
				al.SetProperty(ics.ComponentPropertyDescription, oneLine("Reminder: "+e.Summary))
			}
		}
	}
	return nil
}

const localFormat = "20060102T150405"

// Trigger is a VALARM's TRIGGER d before the start: -PT24H, -PT2H,
// -PT90M.
func Trigger(d time.Duration) string {
	m := int(d / time.Minute)
	if m%60 == 0 {
		return fmt.Sprintf("-PT%dH", m/60)
	}
	return fmt.Sprintf("-PT%dM", m)
}

// Text is s as an RFC 5545 TEXT value may hold it (docs/reference.md
// §11): textout.Lines (line breaks as one LF, which golang-ical writes as
// \n next to its escaping of backslash, ';' and ','; no other control
// character but HTAB). Every text the writer puts into a property goes
// through Text, so no value can end a content line and start one the
// product did not write; the library folds the lines at 75 octets.
func Text(s string) string { return textout.Lines(s) }

// oneLine is Text on one line (SUMMARY, LOCATION, the calendar's name, UID).
func oneLine(s string) string { return textout.OneLine(s) }

// paramText is a name as an unquoted CN parameter may hold it: oneLine, and
// the characters that would end the parameter or the property (DQUOTE, ';',
// ':', ',') or that golang-ical would escape with a backslash no reader
// undoes become spaces, and an apostrophe becomes U+2019.
func paramText(s string) string {
	return oneLine(strings.Map(func(r rune) rune {
		switch r {
		case '"', ';', ':', ',', '\\':
			return ' '
		case '\'':
			return '’'
		}
		return r
	}, s))
}

// address is an e-mail address as a CAL-ADDRESS value: paramText with no
// space left in it.
func address(s string) string { return strings.ReplaceAll(paramText(s), " ", "") }

// Timezone builds the VTIMEZONE of loc for events between from and to: one
// STANDARD or DAYLIGHT observance per offset change from a year before from
// to a year after to. A zone with no change in that span gets one STANDARD
// observance with its fixed offset.
func Timezone(loc *time.Location, from, to time.Time) *ics.VTimezone {
	tz := ics.NewTimezone(loc.String())
	lo, hi := from.AddDate(-1, 0, 0), to.AddDate(1, 0, 0)
	changes := transitions(loc, lo, hi)
	if len(changes) == 0 {
		name, off := from.In(loc).Zone()
		addObservance(tz, false, time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).Format(localFormat), off, off, name)
		return tz
	}
	for _, at := range changes {
		_, before := at.Add(-time.Second).In(loc).Zone()
		name, after := at.In(loc).Zone()
		// DTSTART of an observance is the local time of the change as
		// read on the clock before it (RFC 5545 §3.6.5).
		start := at.UTC().Add(time.Duration(before) * time.Second).Format(localFormat)
		addObservance(tz, at.In(loc).IsDST(), start, before, after, name)
	}
	return tz
}

func addObservance(tz *ics.VTimezone, daylight bool, start string, from, to int, name string) {
	var cb *ics.ComponentBase
	if daylight {
		d := &ics.Daylight{}
		tz.Components = append(tz.Components, d)
		cb = &d.ComponentBase
	} else {
		cb = &tz.AddStandard().ComponentBase
	}
	cb.SetProperty(ics.ComponentPropertyDtStart, start)
	cb.SetProperty(ics.ComponentProperty("TZOFFSETFROM"), offset(from))
	cb.SetProperty(ics.ComponentProperty("TZOFFSETTO"), offset(to))
	if name != "" && !strings.HasPrefix(name, "+") && !strings.HasPrefix(name, "-") {
		cb.SetProperty(ics.ComponentProperty("TZNAME"), name)
	}
}

// offset renders seconds east of UTC as RFC 5545 UTC-OFFSET (+hhmm[ss]).
func offset(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	s := fmt.Sprintf("%s%02d%02d", sign, sec/3600, sec/60%60)
	if sec%60 != 0 {
		s += fmt.Sprintf("%02d", sec%60)
	}
	return s
}

// transitions lists the instants in [from, to) where loc's offset changes:
// the zone boundaries Go's zone database knows (time.Time.ZoneBounds) at
// which the offset differs.
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	_, prev := from.In(loc).Zone()
	for t := from; ; {
		_, end := t.In(loc).ZoneBounds()
		if end.IsZero() || !end.Before(to) {
			return out
		}
		if _, off := end.In(loc).Zone(); off != prev {
			out = append(out, end)
			prev = off
		}
		t = end
	}
}
