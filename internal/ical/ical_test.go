package ical

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	ics "github.com/arran4/golang-ical"
)

// hostile is text an agent, an administrator or a business can write:
// bare CR, CRLF, bare LF and NEL each followed by a property or a component
// line, other control characters, the TEXT specials and a long run.
const hostile = "Ada\rATTENDEE:mailto:cr@evil.example\r\nEND:VEVENT\r\nBEGIN:VEVENT\nUID:lf@evil\u0085SUMMARY:nel\x00\x1b[31m\x7f\u009b;,\\:\"'\ttab " +
	"\u00e9\u4e2d\U0001F600 a-very-long-word-without-any-space-to-fold-at-0123456789012345678901234567890123456789"

func hostileEvent() Event {
	loc, _ := time.LoadLocation("Europe/Paris")
	start := time.Date(2026, 12, 10, 9, 0, 0, 0, loc)
	return Event{UID: "LS-ABC123@auth.example", Sequence: 2, Summary: "Cut at " + hostile, Location: hostile,
		Description: "Booking LS-ABC123 with " + hostile + ". Notes: " + hostile, Start: start, End: start.Add(time.Hour),
		Zone: loc, Organizer: Person{Name: hostile, Email: "no-reply@auth.example"},
		Attendees: []Person{{Name: hostile, Email: "ada@example.com"}}, Stamp: start.Add(-time.Hour)}
}

// written is every property name the writer puts into a calendar; a line
// starting with anything else was injected.
var written = map[string]bool{"BEGIN": true, "END": true, "VERSION": true, "PRODID": true, "METHOD": true,
	"X-WR-CALNAME": true, "NAME": true, "REFRESH-INTERVAL": true, "X-PUBLISHED-TTL": true, "TZID": true, "DTSTART": true,
	"DTEND": true, "TZOFFSETFROM": true, "TZOFFSETTO": true, "TZNAME": true, "UID": true, "DTSTAMP": true,
	"SEQUENCE": true, "SUMMARY": true, "LOCATION": true, "DESCRIPTION": true, "STATUS": true, "TRANSP": true,
	"ORGANIZER": true, "ATTENDEE": true}

// strictLines checks out the way a strict reader takes it: content lines
// end in CRLF and hold no other CR or LF, no line is longer than 75 octets
// or splits a UTF-8 sequence, no control character but HTAB appears, every
// unfolded line's name is one the writer writes, and the object has exactly
// the components, attendees and organizers given.
func strictLines(t testing.TB, out string, events, attendees int) {
	t.Helper()
	if !strings.HasSuffix(out, "\r\n") {
		t.Fatalf("the object does not end in CRLF: %q", out[max(0, len(out)-20):])
	}
	var unfolded []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n") {
		if strings.ContainsAny(l, "\r\n") {
			t.Fatalf("bare CR or LF in content line %q", l)
		}
		if len(l) > 75 || !utf8.ValidString(l) {
			t.Fatalf("content line of %d octets or not UTF-8: %q", len(l), l)
		}
		for _, r := range l {
			if r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) {
				t.Fatalf("control character %U in content line %q", r, l)
			}
		}
		if strings.HasPrefix(l, " ") && len(unfolded) > 0 {
			unfolded[len(unfolded)-1] += l[1:]
			continue
		}
		unfolded = append(unfolded, l)
	}
	count := map[string]int{}
	for _, l := range unfolded {
		name := l[:strings.IndexAny(l+":", ";:")]
		if !written[name] {
			t.Fatalf("property %q the writer never writes: %q", name, l)
		}
		count[name]++
		if name == "BEGIN" || name == "END" {
			count[l]++
		}
	}
	if count["BEGIN:VEVENT"] != events || count["END:VEVENT"] != events || count["ATTENDEE"] != attendees*events ||
		count["ORGANIZER"] > events || count["BEGIN:VCALENDAR"] != 1 || count["END:VCALENDAR"] != 1 {
		t.Fatalf("components or attendees injected: %v", count)
	}
}

func TestInvitationKeepsHostileTextInItsProperty(t *testing.T) {
	e := hostileEvent()
	out, err := Invitation(MethodRequest, e)
	if err != nil {
		t.Fatal(err)
	}
	strictLines(t, out, 1, 1)
	cal, err := ics.ParseCalendar(strings.NewReader(out))
	if err != nil {
		t.Fatalf("golang-ical refuses the invitation: %v", err)
	}
	evs := cal.Events()
	if len(evs) != 1 || len(evs[0].Attendees()) != 1 {
		t.Fatalf("parsed %d events, want 1 with one attendee", len(evs))
	}
	ev := evs[0]
	if got := ev.GetProperty(ics.ComponentPropertyDescription).Value; got != Text(e.Description) {
		t.Fatalf("DESCRIPTION reads back as %q, want %q", got, Text(e.Description))
	}
	if got := ev.GetProperty(ics.ComponentPropertySummary).Value; got != oneLine(e.Summary) || strings.Contains(got, "\n") {
		t.Fatalf("SUMMARY reads back as %q", got)
	}
	if got := ev.Attendees()[0].Email(); got != "ada@example.com" {
		t.Fatalf("attendee %q, want ada@example.com", got)
	}
	if !strings.Contains(Text(e.Description), "Ada\nATTENDEE:mailto:cr@evil.example\nEND:VEVENT\n") {
		t.Fatalf("the line breaks of the notes are lost: %q", Text(e.Description))
	}
}

func TestFeedKeepsHostileTextInItsProperty(t *testing.T) {
	a, b := hostileEvent(), hostileEvent()
	b.UID, b.Attendees = "LS-XYZ789@auth.example\r\nATTENDEE:mailto:x@evil", nil
	a.Attendees = nil
	out, err := Feed("Bookings at "+hostile, []Event{a, b})
	if err != nil {
		t.Fatal(err)
	}
	strictLines(t, out, 2, 0)
	cal, err := ics.ParseCalendar(strings.NewReader(out))
	if err != nil {
		t.Fatalf("golang-ical refuses the feed: %v", err)
	}
	if n := len(cal.Events()); n != 2 {
		t.Fatalf("parsed %d events, want 2", n)
	}
}

func TestTextLineBreaksAndControls(t *testing.T) {
	for in, want := range map[string]string{
		"a\r\nb": "a\nb", "a\rb": "a\nb", "a\nb": "a\nb", "a\r\rb": "a\n\nb", "a\u2028b": "a\nb",
		"a\x00b\x1b\x7f\u009bc\td": "abc\td", "bad\xffutf8": "bad\uFFFDutf8", "": "",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if got := paramText("O'Brien; ROLE=CHAIR:\"x\""); got != "O’Brien ROLE=CHAIR x" {
		t.Errorf("paramText = %q", got)
	}
}

// FuzzEvent feeds arbitrary text into every text of an event (summary,
// location, description, organizer and attendee names, the feed's name)
// and reads the object back strictly and with golang-ical.
func FuzzEvent(f *testing.F) {
	f.Add(hostile, "Main St 1\r\n2nd floor", "Ada")
	f.Add("a\rb", "\n", "\x00")
	f.Fuzz(func(t *testing.T, text, location, name string) {
		e := hostileEvent()
		e.Summary, e.Location, e.Description = text, location, name+"\r"+text
		e.Organizer.Name, e.Attendees[0].Name = name, text
		out, err := Invitation(MethodCancel, e)
		if err != nil {
			t.Fatal(err)
		}
		strictLines(t, out, 1, 1)
		cal, err := ics.ParseCalendar(strings.NewReader(out))
		if err != nil {
			t.Fatalf("golang-ical refuses %q: %v", out, err)
		}
		if got := cal.Events()[0].GetProperty(ics.ComponentPropertyDescription).Value; got != Text(e.Description) {
			t.Fatalf("DESCRIPTION reads back as %q, want %q", got, Text(e.Description))
		}
		e.Attendees = nil
		out, err = Feed(name, []Event{e})
		if err != nil {
			t.Fatal(err)
		}
		strictLines(t, out, 1, 0)
	})
}
