package notify

import (
	"bytes"
	"mime"
	"net/mail"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/booking"
	lsmail "github.com/linkslot/linkslot/internal/mail"
)

// TestLettersOfHostileCatalogText: a business name of 100,000 characters
// and a note, staff and business name with CR, CRLF and bare LF give an
// e-mail whose header lines are at most 998 octets, whose Subject is
// bounded and on one line, whose notes are lines of text (not a Go-quoted
// string), and whose calendar part holds no property the product did not
// write.
func TestLettersOfHostileCatalogText(t *testing.T) {
	n, err := New(Options{Issuer: "https://auth.example"})
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("America/New_York")
	start := time.Date(2026, 3, 6, 10, 0, 0, 0, loc)
	inject := "\rATTENDEE:mailto:cr@evil.example\r\nEND:VEVENT\nBEGIN:VEVENT\r"
	v := booking.BookingView{Reference: "LS-7Q2K9", Status: "confirmed", Version: 1,
		BusinessName: strings.Repeat("Harbor Barbers ", 100_000/15) + inject, ServiceName: "Classic cut",
		StaffName: "Ana" + inject + "Ruiz", TimeZone: "America/New_York", StartsAt: start, EndsAt: start.Add(45 * time.Minute),
		PriceCents: 4500, Currency: "USD"}
	c := Change{Facts: booking.Facts{Action: "create", BusinessName: v.BusinessName, BusinessAddress: "12 Water St" + inject,
		StaffName: v.StaffName, Notes: "First visit\r\nBcc: x@evil.example\rthird line\n\x1b[2Jfourth"}}
	l := n.letters(c, v, "Pat\r\nX-Injected: yes <pat@example.com>")
	if !strings.Contains(l.business.text, "\nCustomer: Pat X-Injected: yes <pat@example.com>\n") {
		t.Fatalf("the customer is not on one line:\n%.300s", l.business.text)
	}
	cal, _, err := n.invitation(c, v, "pat@example.com", start.Add(-time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := lsmail.Composer{From: lsmail.DefaultFrom("auth.example"), Host: "auth.example"}.Bytes(lsmail.Message{
		ID: "msg_1", To: "pat@example.com", Subject: l.person.subject, Text: l.person.text, HTML: l.person.html,
		Calendar: cal, Method: "REQUEST", Date: start})
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	for _, line := range strings.Split(string(head), "\r\n") {
		if len(line) > 998 || strings.ContainsAny(line, "\r\n") {
			t.Fatalf("header line of %d octets: %.80q", len(line), line)
		}
	}
	msg, parts, err := lsmail.ReadParts(raw)
	if err != nil {
		t.Fatal(err)
	}
	subj, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil || utf8.RuneCountInString(subj) > lsmail.MaxSubject || !strings.HasPrefix(subj, "Booked: Classic cut at Harbor Barbers") {
		t.Fatalf("Subject %.100q (%d characters): %v", subj, utf8.RuneCountInString(subj), err)
	}
	if _, err := mail.ParseAddress(msg.Header.Get("To")); err != nil || msg.Header.Get("Bcc") != "" {
		t.Fatalf("To %q, Bcc %q", msg.Header.Get("To"), msg.Header.Get("Bcc"))
	}
	var text, ics, attached string
	for _, p := range parts {
		switch p.ContentType {
		case "application/ics":
			attached = string(p.Body)
		case "text/plain":
			text = strings.ReplaceAll(string(p.Body), "\r\n", "\n") // the part's own line ends
		case "text/calendar":
			ics = string(p.Body)
		}
	}
	if !strings.Contains(text, "Notes for the business: “First visit\n    Bcc: x@evil.example\n    third line\n    [2Jfourth”\n") {
		t.Fatalf("notes not written as lines:\n%s", text)
	}
	if strings.ContainsAny(text, "\r\x1b") {
		t.Fatalf("control characters in the text part: %q", text)
	}
	for _, want := range []string{"With: Ana ATTENDEE:mailto:cr@evil.example END:VEVENT BEGIN:VEVENT Ruiz\n"} {
		if !strings.Contains(text, want) {
			t.Fatalf("text part lacks %q", want)
		}
	}
	if attached != ics || ics == "" {
		t.Fatalf("invite.ics differs from the text/calendar part:\n%s\n%s", attached, ics)
	}
	var lines []string // unfolded
	for _, line := range strings.Split(strings.TrimSuffix(ics, "\r\n"), "\r\n") {
		if strings.ContainsAny(line, "\r\n") || len(line) > 75 {
			t.Fatalf("invalid content line %q", line)
		}
		if strings.HasPrefix(line, " ") && len(lines) > 0 {
			lines[len(lines)-1] += line[1:]
		} else {
			lines = append(lines, line)
		}
	}
	begins, attendees := 0, 0
	for _, line := range lines {
		if line == "BEGIN:VEVENT" {
			begins++
		}
		if strings.HasPrefix(line, "ATTENDEE") {
			attendees++
		}
	}
	if begins != 1 || attendees != 1 {
		t.Fatalf("%d VEVENTs and %d ATTENDEEs in the calendar part, want 1 and 1:\n%s", begins, attendees, ics)
	}
}
