package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	goical "github.com/emersion/go-ical"

	"github.com/linkslot/linkslot/internal/booking"
	lsmail "github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

var ctx = context.Background()

var ny = mustZone("America/New_York")

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// fixture is a business in New York (which changes to daylight time on
// 8 March 2026), a person, and one booking of theirs.
type fixture struct {
	s       *sqlstore.Store
	cat     store.Catalog
	person  store.Account
	booking store.Booking
	now     time.Time
}

func newFixture(t *testing.T, s *sqlstore.Store, contact string) *fixture {
	t.Helper()
	c := store.Catalog{
		Business: store.Business{Reference: "biz-harbor", Name: "Harbor Barbers", Category: store.CategoryAppointment,
			City: "Brooklyn", Address: "12 Water St, Brooklyn", TimeZone: "America/New_York", AgentBooking: true,
			Currency: "USD", HorizonDays: 60, SlotIntervalMinutes: 15, CancellationWindowMinutes: 24 * 60,
			CancellationFeeCents: 1500, CancellationPolicy: "Please give a day's notice.", ContactEmail: contact},
		Services: []store.Service{{Reference: "svc-cut", Name: "Classic cut", DurationMinutes: 45, PriceCents: 4500, Currency: "USD"}},
		Staff:    []store.Staff{{Reference: "stf-ana", Name: "Ana Ruiz", ServiceIDs: []string{"svc-cut"}}},
	}
	cat, err := s.PutCatalog(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 15, 0, 0, 0, time.UTC)
	p := store.Account{ID: store.NewID("acc"), Email: "pat@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
	if err := s.CreateAccount(ctx, p); err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, cat: cat, person: p, now: now}
}

func (f *fixture) facts(action string, start time.Time) booking.Facts {
	return booking.Facts{Action: action, BookingReference: f.booking.Reference, BookingVersion: f.booking.Version,
		BusinessReference: "biz-harbor", BusinessName: "Harbor Barbers", BusinessAddress: "12 Water St, Brooklyn",
		ServiceReference: "svc-cut", ServiceName: "Classic cut", StaffReference: "stf-ana", StaffName: "Ana Ruiz",
		TimeZone: "America/New_York", StartsAt: start.In(ny), EndsAt: start.Add(45 * time.Minute).In(ny),
		PriceCents: 4500, Currency: "USD", CancellationPolicy: "Please give a day's notice.",
		CancellationWindowMinutes: 24 * 60, CancellationFeeCents: 1500, Notes: "First visit"}
}

// change writes one booking change and its notifications in one
// transaction, as the mutation service does.
func (f *fixture) change(t *testing.T, n *notify.Notifier, action string, start time.Time) notify.Notified {
	t.Helper()
	var out notify.Notified
	err := f.s.InTx(ctx, func(tx store.Store) error {
		fc := f.facts(action, start)
		switch action {
		case "create":
			f.booking = store.Booking{ID: store.NewID("bkg"), Reference: "LS-7Q2K9", BusinessID: f.cat.Business.ID,
				ServiceID: f.cat.Services[0].ID, StaffID: f.cat.Staff[0].ID, AccountID: f.person.ID, LinkID: "lnk_x",
				StartsAt: start, EndsAt: start.Add(45 * time.Minute), BlockStart: start, BlockEnd: start.Add(45 * time.Minute),
				Status: store.BookingConfirmed, Version: 1, Notes: "First visit", PriceCents: 4500, Currency: "USD",
				CreatedAt: f.now, UpdatedAt: f.now}
			if err := tx.InsertBooking(ctx, f.booking); err != nil {
				return err
			}
		default:
			prev := f.booking
			fc.PreviousStartsAt, fc.PreviousEndsAt, fc.PreviousStaffName = prev.StartsAt.In(ny), prev.EndsAt.In(ny), "Ana Ruiz"
			b, err := tx.UpdateBooking(ctx, prev.ID, func(b store.Booking) (store.Booking, error) {
				b.Version++
				if action == "cancel" {
					b.Status = store.BookingCancelled
					b.CancellationFeeCents = 1500
					c := f.now
					b.CancelledAt = &c
				} else {
					b.StartsAt, b.EndsAt = start, start.Add(45*time.Minute)
					b.BlockStart, b.BlockEnd = b.StartsAt, b.EndsAt
				}
				return b, nil
			})
			if err != nil {
				return err
			}
			f.booking = b
		}
		fc.BookingReference = f.booking.Reference
		var err error
		out, err = n.BookingChanged(ctx, tx, notify.Change{Facts: fc, Booking: f.booking})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// invitation is what a calendar reads from a text/calendar part.
type invitation struct {
	method, uid, status, summary, location string
	sequence                               int
	start, end                             time.Time // instants, resolved with the object's own VTIMEZONE
	tzid                                   string
}

// parseInvitation decodes the part with github.com/emersion/go-ical and
// resolves DTSTART/DTEND through the VTIMEZONE the object carries (not Go's
// zone database): the instant a calendar without our zone data would show.
func parseInvitation(t *testing.T, body string) invitation {
	t.Helper()
	cal, err := goical.NewDecoder(strings.NewReader(body)).Decode()
	if err != nil {
		t.Fatalf("iCalendar: %v\n%s", err, body)
	}
	if !strings.Contains(body, "\r\n") {
		t.Fatal("iCalendar lines do not end in CRLF")
	}
	evs := cal.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	ev := evs[0]
	text := func(p *goical.Prop) string {
		if p == nil {
			return ""
		}
		v, err := p.Text()
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		return v
	}
	inv := invitation{method: text(cal.Props.Get(goical.PropMethod)), uid: text(ev.Props.Get(goical.PropUID)),
		status: text(ev.Props.Get(goical.PropStatus)), summary: text(ev.Props.Get(goical.PropSummary)),
		location: text(ev.Props.Get(goical.PropLocation))}
	seq, err := ev.Props.Get(goical.PropSequence).Int()
	if err != nil {
		t.Fatal(err)
	}
	inv.sequence = seq
	start, end := ev.Props.Get(goical.PropDateTimeStart), ev.Props.Get(goical.PropDateTimeEnd)
	inv.tzid = start.Params.Get(goical.PropTimezoneID)
	if end.Params.Get(goical.PropTimezoneID) != inv.tzid {
		t.Fatal("DTSTART and DTEND in different zones")
	}
	var tz *goical.Component
	for _, c := range cal.Children {
		if c.Name == goical.CompTimezone && text(c.Props.Get(goical.PropTimezoneID)) == inv.tzid {
			tz = c
		}
	}
	if tz == nil {
		t.Fatalf("no VTIMEZONE for TZID %q", inv.tzid)
	}
	inv.start, inv.end = resolve(t, tz, start.Value), resolve(t, tz, end.Value)
	// Go's zone database agrees with the object's own VTIMEZONE.
	if s, err := ev.DateTimeStart(nil); err != nil || !s.Equal(inv.start) {
		t.Fatalf("DTSTART via the zone database %v (%v), via VTIMEZONE %v", s, err, inv.start)
	}
	return inv
}

// resolve converts a local date-time to an instant with the observances of a
// VTIMEZONE: the offset of the latest observance that began before it.
func resolve(t *testing.T, tz *goical.Component, local string) time.Time {
	t.Helper()
	lt, err := time.Parse("20060102T150405", local)
	if err != nil {
		t.Fatal(err)
	}
	var best time.Time
	offset := 0
	found := false
	for _, o := range tz.Children {
		if o.Name != goical.CompTimezoneStandard && o.Name != goical.CompTimezoneDaylight {
			continue
		}
		onset, err := time.Parse("20060102T150405", o.Props.Get(goical.PropDateTimeStart).Value)
		if err != nil {
			t.Fatal(err)
		}
		if !onset.After(lt) && (!found || onset.After(best)) {
			best, found = onset, true
			offset = parseOffset(t, o.Props.Get(goical.PropTimezoneOffsetTo).Value)
		}
	}
	if !found {
		t.Fatalf("VTIMEZONE has no observance before %s", local)
	}
	return lt.Add(-time.Duration(offset) * time.Second).UTC()
}

func parseOffset(t *testing.T, s string) int {
	t.Helper()
	if len(s) < 5 {
		t.Fatalf("offset %q", s)
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	h, m := int(s[1]-'0')*10+int(s[2]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	return sign * (h*3600 + m*60)
}

// TestBookingEmailsThroughSMTP: create, reschedule across the start of
// daylight time, and cancel one booking; the outbox worker sends every
// message to a real SMTP server (github.com/emersion/go-smtp), and every
// message is parsed with MIME and iCalendar libraries: the person and the
// business each get three e-mails with text and HTML parts and a calendar
// invitation with the same UID, a SEQUENCE rising with the version, the
// business's TZID and the right instants on both sides of the DST change.
func TestBookingEmailsThroughSMTP(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s, "desk@harbor.example")
		smtpd := testkit.NewSMTPServer(t)
		clock := f.now
		n, err := notify.New(notify.Options{Issuer: "https://auth.linkslot.test:8443", Clock: func() time.Time { return clock }})
		if err != nil {
			t.Fatal(err)
		}
		settings, err := lsmail.ParseURL(smtpd.URL())
		if err != nil {
			t.Fatal(err)
		}
		sender := &lsmail.SMTP{Composer: lsmail.Composer{From: lsmail.DefaultFrom(n.Host()), Host: n.Host()}, Settings: settings}
		w := &outbox.Worker{Store: s, Channels: map[string]outbox.Deliverer{store.ChannelEmail: notify.MailDeliverer(sender)},
			Clock: func() time.Time { return clock }}

		before := time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC) // Friday 10:00 EST (UTC-5)
		after := time.Date(2026, 3, 9, 14, 0, 0, 0, time.UTC)  // Monday 10:00 EDT (UTC-4)
		steps := []struct {
			action, method, status, subject, text string
			start                                 time.Time
		}{
			{"create", "REQUEST", "CONFIRMED", "Booked: Classic cut at Harbor Barbers, Fri 6 Mar 10:00", "Friday 6 March 2026, 10:00–10:45 (America/New_York, EST)", before},
			{"reschedule", "REQUEST", "CONFIRMED", "Moved: Classic cut at Harbor Barbers, Mon 9 Mar 10:00", "Monday 9 March 2026, 10:00–10:45 (America/New_York, EDT)", after},
			{"cancel", "CANCEL", "CANCELLED", "Cancelled: Classic cut at Harbor Barbers, Mon 9 Mar 10:00", "Monday 9 March 2026, 10:00–10:45 (America/New_York, EDT)", after},
		}
		uid := ""
		for i, st := range steps {
			got := f.change(t, n, st.action, st.start)
			if got != (notify.Notified{Person: notify.Queued, Business: notify.Queued, Webhooks: 0}) {
				t.Fatalf("%s: notified %+v", st.action, got)
			}
			clock = clock.Add(time.Minute)
			if _, err := w.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			mails := smtpd.WaitFor(t, 2*(i+1), 10*time.Second)[2*i:]
			for _, m := range mails {
				msg, parts := testkit.ParseMail(t, m.Data)
				to := msg.Header.Get("To")
				isBusiness := strings.Contains(to, "desk@harbor.example")
				if !isBusiness && !strings.Contains(to, "pat@example.com") {
					t.Fatalf("message to %q", to)
				}
				if from := msg.Header.Get("From"); !strings.Contains(from, "no-reply@auth.linkslot.test") {
					t.Fatalf("From %q", from)
				}
				if subj := testkit.Subject(t, msg); !strings.HasPrefix(subj, st.subject) {
					t.Fatalf("Subject %q, want %q", subj, st.subject)
				}
				if id := msg.Header.Get("Message-Id"); !strings.HasSuffix(id, "@auth.linkslot.test>") {
					t.Fatalf("Message-ID %q", id)
				}
				text, html := testkit.FindPart(parts, "text/plain", false), testkit.FindPart(parts, "text/html", false)
				if text == nil || html == nil {
					t.Fatalf("%s: parts %v", st.action, parts)
				}
				for _, want := range []string{st.text, "Harbor Barbers, 12 Water St, Brooklyn", "Classic cut", "Ana Ruiz", "LS-7Q2K9"} {
					if !strings.Contains(text.Body, want) {
						t.Errorf("%s text lacks %q:\n%s", st.action, want, text.Body)
					}
					if !strings.Contains(html.Body, strings.ReplaceAll(want, "'", "&#39;")) {
						t.Errorf("%s HTML lacks %q", st.action, want)
					}
				}
				if isBusiness && !strings.Contains(text.Body, "pat@example.com") {
					t.Errorf("business e-mail does not name the customer:\n%s", text.Body)
				}
				if st.action == "create" && !strings.Contains(text.Body, "USD 45.00") {
					t.Errorf("create e-mail lacks the price:\n%s", text.Body)
				}
				// The summary's cancellation terms (confirm.CancellationTerms)
				// and the business's own words.
				if terms := "; after that, cancelling costs USD 15.00. Please give a day's notice."; st.action != "cancel" &&
					(!strings.Contains(text.Body, "Cancellation: free until ") || !strings.Contains(text.Body, terms)) {
					t.Errorf("%s e-mail lacks the summary's cancellation terms:\n%s", st.action, text.Body)
				}
				cal := testkit.FindPart(parts, "text/calendar", false)
				if cal == nil || !strings.EqualFold(cal.Params["method"], st.method) {
					t.Fatalf("%s: text/calendar part %+v", st.action, cal)
				}
				if att := testkit.FindPart(parts, "application/ics", true); att == nil || att.Body != cal.Body {
					t.Fatalf("%s: invite.ics attachment missing or different", st.action)
				}
				inv := parseInvitation(t, cal.Body)
				if uid == "" {
					uid = inv.uid
				}
				if inv.uid != "LS-7Q2K9@auth.linkslot.test" || inv.uid != uid {
					t.Fatalf("UID %q (first %q)", inv.uid, uid)
				}
				if inv.method != st.method || inv.status != st.status || inv.sequence != i+1 {
					t.Fatalf("%s: METHOD %s STATUS %s SEQUENCE %d", st.action, inv.method, inv.status, inv.sequence)
				}
				if inv.tzid != "America/New_York" || !inv.start.Equal(st.start) || !inv.end.Equal(st.start.Add(45*time.Minute)) {
					t.Fatalf("%s: %s %v–%v, want %v", st.action, inv.tzid, inv.start, inv.end, st.start)
				}
				if inv.summary != "Classic cut at Harbor Barbers" || inv.location != "12 Water St, Brooklyn" {
					t.Fatalf("SUMMARY %q LOCATION %q", inv.summary, inv.location)
				}
			}
		}
		// Only the reminders, due before the appointment, are left.
		if left, _ := s.ListMessages(ctx, store.OutboxFilter{Status: store.OutboxQueued}); len(notReminders(left)) != 0 {
			t.Fatalf("%d messages still queued", len(notReminders(left)))
		}
	})
}

// TestNoContactNoEndpoint: a business with no contact e-mail and no webhook
// endpoint answers business "none"; with e-mail off the person is "off"
// and nothing is queued.
func TestNoContactNoEndpoint(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s, "")
		n, _ := notify.New(notify.Options{Issuer: "http://127.0.0.1:8080", Clock: func() time.Time { return f.now }})
		start := time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC)
		if got := f.change(t, n, "create", start); got != (notify.Notified{Person: notify.Queued, Business: notify.None}) {
			t.Fatalf("notified %+v", got)
		}
		off, _ := notify.New(notify.Options{Issuer: "http://127.0.0.1:8080", MailOff: true})
		if got := f.change(t, off, "cancel", start); got != (notify.Notified{Person: notify.Off, Business: notify.None}) {
			t.Fatalf("mail off: notified %+v", got)
		}
		ms, err := s.ListMessages(ctx, store.OutboxFilter{})
		ms = notReminders(ms)
		if err != nil || len(ms) != 1 || ms[0].Recipient != "pat@example.com" {
			t.Fatalf("messages %+v, %v", ms, err)
		}
	})
}

// notReminders leaves out the reminders a booking queues (reminders_test.go
// checks them).
func notReminders(ms []store.OutboxMessage) []store.OutboxMessage {
	var out []store.OutboxMessage
	for _, m := range ms {
		if m.Topic != notify.EventReminder {
			out = append(out, m)
		}
	}
	return out
}

// TestQueueEmail: the API other parts use to send one e-mail to one person
// (verification, password reset) queues it in the caller's transaction and
// sends it with both parts; nothing is queued when mail is off.
func TestQueueEmail(t *testing.T) {
	s := sqltest.SQLite(t)
	now := time.Date(2026, 3, 1, 15, 0, 0, 0, time.UTC)
	n, _ := notify.New(notify.Options{Issuer: "http://localhost:8080", Clock: func() time.Time { return now }})
	err := s.InTx(ctx, func(tx store.Store) error {
		ok, err := n.QueueEmail(ctx, tx, notify.Email{To: "new@example.com", Topic: "account.verify", Subject: "Confirm your address",
			Text: "Open this link: http://localhost:8080/verify?token=abc", HTML: "<p>Open <a href=\"http://localhost:8080/verify?token=abc\">this link</a></p>"})
		if !ok {
			t.Error("QueueEmail answered false with mail on")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	smtpd := testkit.NewSMTPServer(t)
	settings, _ := lsmail.ParseURL(smtpd.URL())
	sender := &lsmail.SMTP{Composer: lsmail.Composer{From: "Linkslot <no-reply@localhost>", Host: "localhost"}, Settings: settings}
	w := &outbox.Worker{Store: s, Channels: map[string]outbox.Deliverer{store.ChannelEmail: notify.MailDeliverer(sender)}, Clock: func() time.Time { return now }}
	if _, err := w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	m := smtpd.WaitFor(t, 1, 10*time.Second)[0]
	if len(m.To) != 1 || m.To[0] != "new@example.com" {
		t.Fatalf("envelope to %v", m.To)
	}
	msg, parts := testkit.ParseMail(t, m.Data)
	if msg.Header.Get("Subject") != "Confirm your address" || testkit.FindPart(parts, "text/plain", false) == nil || testkit.FindPart(parts, "text/html", false) == nil {
		t.Fatalf("message %v parts %+v", msg.Header, parts)
	}
	if !strings.Contains(testkit.FindPart(parts, "text/plain", false).Body, "verify?token=abc") {
		t.Fatal("text part lost the link")
	}
	off, _ := notify.New(notify.Options{Issuer: "http://localhost:8080", MailOff: true})
	if ok, err := off.QueueEmail(ctx, s, notify.Email{To: "x@example.com", Topic: "t", Subject: "s", Text: "t"}); ok || err != nil {
		t.Fatalf("mail off: %v %v", ok, err)
	}
	if _, err := n.QueueEmail(ctx, s, notify.Email{To: "x@example.com"}); err == nil {
		t.Fatal("an e-mail without subject and text was queued")
	}
}
