package mutation_test

// The business channel (docs/reference.md "Bookings the business answers")
// on both backends: pending bookings made through the protocol, a member's
// confirm, decline, complete, no-show and cancel with their refusals, the
// real notifier's outbox messages, e-mails delivered to the in-process SMTP
// server and parsed as a mail client would, and the expiry job under an
// injected clock, twice over one database.

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/keys"
	lsmail "github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

type bizEnv struct {
	st       *sqlstore.Store
	clk      *clock
	svc      *mutation.Service
	engine   *booking.Service
	ann      store.Account
	agent    mutation.Caller
	bizID    string
	otherBiz string
	ana, bo  string // staff ids
	owner    mutation.Member
}

func newBizEnv(t *testing.T, st *sqlstore.Store) *bizEnv {
	t.Helper()
	var hours []store.HoursWindow
	for d := time.Sunday; d <= time.Saturday; d++ {
		hours = append(hours, store.HoursWindow{Weekday: d, StartMin: 9 * 60, EndMin: 17 * 60})
	}
	cat, err := st.PutCatalog(ctx, store.Catalog{
		Business: store.Business{Reference: "biz-ny", Name: "Harbor Dental", Category: store.CategoryAppointment, City: "New York",
			Address: "12 Water St", TimeZone: "America/New_York", AgentBooking: true, MinNoticeMinutes: 60, HorizonDays: 30,
			SlotIntervalMinutes: 15, CancellationWindowMinutes: 24 * 60, CancellationFeeCents: 2500, Currency: "USD",
			CancellationPolicy: "Please give 24 hours' notice.", ContactEmail: "desk@harbor.example"},
		OpeningHours: hours,
		Services: []store.Service{
			{Reference: "svc-clean", Name: "Cleaning", DurationMinutes: 45, PriceCents: 12000, Currency: "USD"},
			{Reference: "svc-implant", Name: "Implant consult", DurationMinutes: 60, PriceCents: 20000, Currency: "USD", RequiresConfirmation: true},
		},
		Staff: []store.Staff{{Reference: "stf-ana", Name: "Dr. Ana Ruiz", ServiceIDs: []string{"svc-clean", "svc-implant"}},
			{Reference: "stf-bo", Name: "Dr. Bo Chen", ServiceIDs: []string{"svc-clean", "svc-implant"}}},
		StaffHours: map[string][]store.HoursWindow{"stf-ana": hours, "stf-bo": hours},
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.PutCatalog(ctx, store.Catalog{
		Business: store.Business{Reference: "biz-other", Name: "Other Dental", Category: store.CategoryAppointment,
			TimeZone: "America/New_York", AgentBooking: true, Currency: "USD", HorizonDays: 30, SlotIntervalMinutes: 15}})
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	ann := store.Account{ID: "acc_ann", Email: "ann@example.com", PasswordHash: "x", CreatedAt: c.Now(), UpdatedAt: c.Now()}
	if err := st.CreateAccount(ctx, ann); err != nil {
		t.Fatal(err)
	}
	km := keys.NewManager(st, []byte("protocol test secret, long enough"), "booking-grant", c.Now)
	if err := km.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: cat.Business.ID,
		URL: "https://hooks.harbor.example/linkslot", Events: notify.Events, SecretEncrypted: []byte("sealed"), Enabled: true,
		CreatedAt: c.Now(), UpdatedAt: c.Now()}); err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(notify.Options{Issuer: "https://auth.linkslot.test", Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	engine := booking.NewService(st, c.Now)
	svc := &mutation.Service{Engine: engine, Grants: grant.New(km, c.Now),
		Keeper: idempotency.New(st, mutation.InTx(st), c.Now, 24*time.Hour), Notifier: n, Clock: c.Now, InTx: mutation.InTx(st)}
	e := &bizEnv{st: st, clk: c, svc: svc, engine: engine, ann: ann, bizID: cat.Business.ID, otherBiz: other.Business.ID,
		agent: mutation.Caller{AccountID: ann.ID, LinkID: "lnk_agent1", ClientID: "cli_1", Channel: mutation.ChannelAgent}}
	for _, s := range cat.Staff {
		switch s.Reference {
		case "stf-ana":
			e.ana = s.ID
		case "stf-bo":
			e.bo = s.ID
		}
	}
	e.owner = mutation.Member{AccountID: "acc_owner", BusinessID: e.bizID, Role: mutation.RoleOwner, Name: "Olivia Owner"}
	return e
}

// book makes a booking through the protocol as the agent: preview, then
// execute.
func (e *bizEnv) book(t *testing.T, service, staff, start, key string) mutation.Outcome {
	t.Helper()
	cr := mutation.CreateRequest{BusinessRef: "biz-ny", ServiceRef: service, StaffRef: staff, StartsAt: at(t, start), Notes: "Please call first."}
	pre := must(t, "preview")(e.svc.Create(ctx, e.agent, cr, mutation.Confirmation{}))
	return must(t, "create")(e.svc.Create(ctx, e.agent, cr, confirmed(pre.Summary, key)))
}

func (e *bizEnv) status(t *testing.T, ref string) store.Booking {
	t.Helper()
	b, err := e.st.GetBookingByReference(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// topics lists the outbox topics queued for a booking, by channel.
// Reminders, due before the appointment, are left apart (internal/notify's
// reminder tests; docs/calendars.md "Reminders").
func (e *bizEnv) topics(t *testing.T, bookingID, channel string) []string {
	t.Helper()
	ms, err := e.st.ListMessages(ctx, store.OutboxFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		if m.BookingID == bookingID && m.Channel == channel && m.Topic != notify.EventReminder {
			out = append(out, m.Topic)
		}
	}
	slices.Sort(out)
	return out
}

func act(ref string, a mutation.BusinessAction, version int, key string) mutation.BusinessRequest {
	return mutation.BusinessRequest{BookingRef: ref, Action: a, Version: version, IdempotencyKey: key}
}

func TestPendingAndBusinessActions(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		e := newBizEnv(t, st)
		svc := e.svc

		// A service that requires confirmation: the summary says so, the
		// answer is pending, the booking holds its slot until respond_by.
		cr := mutation.CreateRequest{BusinessRef: "biz-ny", ServiceRef: "svc-implant", StaffRef: "stf-ana", StartsAt: at(t, "2026-06-03T10:00:00-04:00")}
		pre := must(t, "preview")(svc.Create(ctx, e.agent, cr, mutation.Confirmation{}))
		if !strings.HasPrefix(pre.Summary, "Request this appointment (the business must confirm it):") ||
			!strings.Contains(pre.Summary, "Harbor Dental confirms or declines this request within 24 hours") {
			t.Fatalf("pending summary:\n%s", pre.Summary)
		}
		p := must(t, "create pending")(svc.Create(ctx, e.agent, cr, confirmed(pre.Summary, "pending-key-00000001")))
		wantBy := time.Date(2026, 6, 2, 12, 0, 0, 0, time.UTC)
		if p.Status != mutation.StatusPending || p.Booking.Status != store.BookingPending || p.Booking.RespondBy == nil ||
			!p.Booking.RespondBy.Equal(wantBy) || p.Grant == "" {
			t.Fatalf("pending create: %+v", p)
		}
		ref := p.Booking.Reference
		bk := e.status(t, ref)
		if got := e.topics(t, bk.ID, store.ChannelWebhook); !slices.Equal(got, []string{notify.EventPending}) {
			t.Fatalf("pending webhooks: %v", got)
		}
		// The event's booking is as get_my_booking shows it: pending, with
		// respond_by.
		ms, err := st.ListMessages(ctx, store.OutboxFilter{})
		if err != nil {
			t.Fatal(err)
		}
		reminded := 0
		for _, m := range ms {
			if m.BookingID == bk.ID && m.Topic == notify.EventReminder && m.Channel == store.ChannelEmail {
				// A pending booking's reminders say it awaits the
				// business's confirmation (docs/calendars.md "Reminders").
				reminded++
				if !strings.Contains(string(m.Payload), "Reminder (awaiting confirmation)") || !strings.Contains(string(m.Payload), "has not confirmed it yet") {
					t.Fatalf("pending reminder: %s", m.Payload)
				}
			}
			if m.BookingID != bk.ID || m.Channel != store.ChannelWebhook || m.Topic == notify.EventReminder {
				continue
			}
			var ev notify.WebhookEvent
			if err := json.Unmarshal(m.Payload, &ev); err != nil || ev.Type != notify.EventPending || ev.Data.Booking.Status != "pending" ||
				ev.Data.Booking.RespondBy == nil || !ev.Data.Booking.RespondBy.Equal(wantBy) || ev.Data.Customer.Email != "ann@example.com" {
				t.Fatalf("pending webhook payload: %s (%v)", m.Payload, err)
			}
		}
		if reminded == 0 {
			t.Fatalf("a pending booking got no reminder")
		}
		// The slot is held: an overlapping create for the same staff member
		// is refused, and availability does not offer it.
		over := mutation.CreateRequest{BusinessRef: "biz-ny", ServiceRef: "svc-clean", StaffRef: "stf-ana", StartsAt: at(t, "2026-06-03T10:30:00-04:00")}
		if _, err := svc.Create(ctx, e.agent, over, mutation.Confirmation{}); code(err) != "slot_taken" {
			t.Fatalf("overlap with pending: %v", err)
		}
		av, err := e.engine.Availability(ctx, booking.AvailabilityQuery{BusinessRef: "biz-ny", ServiceRef: "svc-clean", LocalDate: "2026-06-03", StaffRef: "stf-ana"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range av.Staff[0].Slots {
			if s.StartsAt.Before(at(t, "2026-06-03T11:00:00-04:00")) && s.EndsAt.After(at(t, "2026-06-03T10:00:00-04:00")) {
				t.Fatalf("availability offers %v inside the pending booking", s.StartsAt)
			}
		}
		// get_my_booking and search_my_bookings status=pending show it.
		if v, err := e.engine.MyBooking(ctx, e.ann.ID, ref); err != nil || v.Status != "pending" || v.RespondBy == nil {
			t.Fatalf("my booking: %+v %v", v, err)
		}
		if pg, err := e.engine.MyBookings(ctx, e.ann.ID, "pending", 10, 0); err != nil || len(pg.Results) != 1 || pg.Results[0].Reference != ref {
			t.Fatalf("pending list: %+v %v", pg, err)
		}

		// Refusals that change nothing.
		staffAna := mutation.Member{AccountID: "acc_ana", BusinessID: e.bizID, Role: mutation.RoleStaff, StaffID: e.ana, Name: "Dr. Ana Ruiz"}
		staffBo := mutation.Member{AccountID: "acc_bo", BusinessID: e.bizID, Role: mutation.RoleStaff, StaffID: e.bo, Name: "Dr. Bo Chen"}
		stranger := mutation.Member{AccountID: "acc_x", BusinessID: e.otherBiz, Role: mutation.RoleOwner, Name: "Someone Else"}
		refusals := []struct {
			name string
			m    mutation.Member
			r    mutation.BusinessRequest
			want string
		}{
			{"another business", stranger, act(ref, mutation.ActionConfirm, 1, "refusal-key-0000001"), "booking_not_found"},
			{"another staff member", staffBo, act(ref, mutation.ActionConfirm, 1, "refusal-key-0000002"), "booking_not_found"},
			{"no such booking", e.owner, act("LS-NOPE000000", mutation.ActionConfirm, 1, "refusal-key-0000003"), "booking_not_found"},
			{"stale version", e.owner, act(ref, mutation.ActionConfirm, 7, "refusal-key-0000004"), "booking_changed"},
			{"complete a pending booking", e.owner, act(ref, mutation.ActionComplete, 1, "refusal-key-0000005"), "invalid_transition"},
			{"no-show in the future", e.owner, act(ref, mutation.ActionNoShow, 1, "refusal-key-0000006"), "invalid_transition"},
			{"cancel without a reason", e.owner, act(ref, mutation.ActionCancel, 1, "refusal-key-0000007"), "invalid_argument"},
			{"unknown action", e.owner, act(ref, "archive", 1, "refusal-key-0000008"), "invalid_argument"},
			{"no key", e.owner, act(ref, mutation.ActionConfirm, 1, ""), "missing_idempotency_key"},
			{"short key", e.owner, act(ref, mutation.ActionConfirm, 1, "short"), "invalid_idempotency_key"},
			{"no version", e.owner, act(ref, mutation.ActionConfirm, 0, "refusal-key-0000011"), "invalid_argument"},
		}
		acts := e.count(t, "activities")
		for _, c := range refusals {
			if _, err := svc.Business(ctx, c.m, c.r); code(err) != c.want {
				t.Errorf("%s: %v, want %s", c.name, err, c.want)
			}
		}
		if b := e.status(t, ref); b.Status != store.BookingPending || b.Version != 1 || e.count(t, "activities") != acts {
			t.Fatalf("a refusal changed something: %+v", b)
		}
		// The wrong business's refusal reads exactly like a missing booking's.
		_, e1 := svc.Business(ctx, stranger, act(ref, mutation.ActionConfirm, 1, "refusal-key-0000009"))
		_, e2 := svc.Business(ctx, stranger, act("LS-NOPE000000", mutation.ActionConfirm, 1, "refusal-key-0000010"))
		if e1 == nil || e2 == nil || e1.Error() != e2.Error() {
			t.Fatalf("distinguishable: %v / %v", e1, e2)
		}

		// Ana (staff, her own booking) confirms; a double submit replays.
		conf := act(ref, mutation.ActionConfirm, 1, "confirm-key-00000001")
		o := must(t, "confirm")(svc.Business(ctx, staffAna, conf))
		if o.Status != mutation.StatusConfirmed || o.Booking.Status != store.BookingConfirmed || o.Booking.Version != 2 ||
			o.Booking.RespondBy != nil || o.Notified == nil || o.Notified.Person != "queued" || o.Notified.Webhooks != 1 ||
			!strings.Contains(o.Summary, "confirmed by the business") || !strings.Contains(o.Summary, "By: Dr. Ana Ruiz") {
			t.Fatalf("confirm: %+v", o)
		}
		again := must(t, "double submit")(svc.Business(ctx, staffAna, conf))
		if !again.Replay || again.Status != o.Status || again.Booking.Version != 2 {
			t.Fatalf("double submit: %+v", again)
		}
		if _, err := svc.Business(ctx, staffAna, act(ref, mutation.ActionDecline, 1, "confirm-key-00000001")); code(err) != "idempotency_conflict" {
			t.Fatalf("same key, other action: %v", err)
		}
		// Confirming again is refused, and the grant of version 1 died.
		if _, err := svc.Business(ctx, e.owner, act(ref, mutation.ActionConfirm, 2, "confirm-key-00000002")); code(err) != "invalid_transition" {
			t.Fatalf("confirm twice: %v", err)
		}
		if _, err := svc.Cancel(ctx, e.agent, mutation.CancelRequest{BookingRef: ref, Grant: p.Grant}, mutation.Confirmation{}); code(err) != "invalid_grant" {
			t.Fatalf("old grant after confirm: %v", err)
		}
		if got := e.topics(t, bk.ID, store.ChannelWebhook); !slices.Equal(got, []string{notify.EventConfirmed, notify.EventPending}) {
			t.Fatalf("webhooks after confirm: %v", got)
		}
		// The person's Activity shows who did it, via the business.
		page, err := st.ListActivity(ctx, e.ann.ID, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(page, func(a store.Activity) bool { return a.Via == store.ViaBusiness })
		if len(page) != 2 || i < 0 || page[i].Actor != "Dr. Ana Ruiz" || page[i].Tool != "business:confirm" ||
			page[i].LinkID != "" || !strings.Contains(page[i].Summary, ref) {
			t.Fatalf("activity: %d entries, business entry %d", len(page), i)
		}

		// The owner cancels it with a reason: the slot is free again.
		cx := act(ref, mutation.ActionCancel, 2, "cancel-key-000000001")
		cx.Reason = "Dr. Ruiz is ill that day."
		o = must(t, "cancel")(svc.Business(ctx, e.owner, cx))
		if o.Status != mutation.StatusCancelled || o.Booking.Version != 3 || o.Booking.CancelReason != cx.Reason || o.Booking.CancellationFeeCents != 0 {
			t.Fatalf("business cancel: %+v", o)
		}
		if _, err := svc.Create(ctx, e.agent, over, mutation.Confirmation{}); err != nil {
			t.Fatalf("slot after cancel: %v", err)
		}

		// Another pending request, declined with a reason.
		p2 := e.book(t, "svc-implant", "stf-bo", "2026-06-04T09:00:00-04:00", "pending-key-00000002")
		dx := act(p2.Booking.Reference, mutation.ActionDecline, 1, "decline-key-00000001")
		dx.Reason = "We need X-rays first."
		o = must(t, "decline")(svc.Business(ctx, staffBo, dx))
		if o.Status != mutation.StatusDeclined || o.Booking.Status != store.BookingDeclined || o.Booking.Version != 2 {
			t.Fatalf("decline: %+v", o)
		}
		if pg, _ := e.engine.MyBookings(ctx, e.ann.ID, "cancelled", 10, 0); len(pg.Results) != 2 {
			t.Fatalf("cancelled list (cancelled and declined): %+v", pg.Results)
		}
		// The person may still move a pending booking (it stays pending,
		// answered by the same time) and cancel it themselves (free).
		p3 := e.book(t, "svc-implant", "stf-ana", "2026-06-05T09:00:00-04:00", "pending-key-00000003")
		mv := mutation.RescheduleRequest{BookingRef: p3.Booking.Reference, Grant: p3.Grant, StartsAt: at(t, "2026-06-05T11:00:00-04:00")}
		mpre := must(t, "move preview")(svc.Reschedule(ctx, e.agent, mv, mutation.Confirmation{}))
		moved := must(t, "move pending")(svc.Reschedule(ctx, e.agent, mv, confirmed(mpre.Summary, "move-pending-key-001")))
		if moved.Booking.Status != store.BookingPending || moved.Booking.RespondBy == nil || !moved.Booking.RespondBy.Equal(*p3.Booking.RespondBy) {
			t.Fatalf("moved pending booking: %+v", moved.Booking)
		}
		p3.Grant = moved.Grant
		cpre := must(t, "cancel preview")(svc.Cancel(ctx, e.agent, mutation.CancelRequest{BookingRef: p3.Booking.Reference, Grant: p3.Grant}, mutation.Confirmation{}))
		if c := must(t, "person cancels pending")(svc.Cancel(ctx, e.agent, mutation.CancelRequest{BookingRef: p3.Booking.Reference, Grant: p3.Grant},
			confirmed(cpre.Summary, "cancel-own-key-00001"))); c.Status != mutation.StatusCancelled {
			t.Fatalf("person cancel: %+v", c)
		}

		// A confirmed booking: completed and no-show only once it started.
		c1 := e.book(t, "svc-clean", "stf-ana", "2026-06-01T14:00:00-04:00", "plain-key-0000000001")
		c2 := e.book(t, "svc-clean", "stf-bo", "2026-06-01T14:00:00-04:00", "plain-key-0000000002")
		if c1.Status != mutation.StatusConfirmed {
			t.Fatalf("plain create: %+v", c1)
		}
		if _, err := svc.Business(ctx, e.owner, act(c1.Booking.Reference, mutation.ActionComplete, 1, "complete-key-0000001")); code(err) != "invalid_transition" {
			t.Fatalf("complete before start: %v", err)
		}
		e.clk.Set(time.Date(2026, 6, 1, 18, 30, 0, 0, time.UTC)) // both started at 14:00 EDT (18:00 UTC)
		o = must(t, "complete")(svc.Business(ctx, e.owner, act(c1.Booking.Reference, mutation.ActionComplete, 1, "complete-key-0000002")))
		if o.Status != mutation.StatusCompleted || o.Notified.Person != notify.None || o.Notified.Webhooks != 1 {
			t.Fatalf("complete: %+v", o)
		}
		o = must(t, "no-show")(svc.Business(ctx, staffBo, act(c2.Booking.Reference, mutation.ActionNoShow, 1, "noshow-key-000000001")))
		if o.Status != mutation.StatusNoShow || e.status(t, c2.Booking.Reference).Status != store.BookingNoShow {
			t.Fatalf("no-show: %+v", o)
		}
		if _, err := svc.Business(ctx, e.owner, act(c1.Booking.Reference, mutation.ActionNoShow, 2, "noshow-key-000000002")); code(err) != "invalid_transition" {
			t.Fatalf("no-show of a completed booking: %v", err)
		}
		if _, err := svc.Business(ctx, e.owner, act(ref, mutation.ActionComplete, 3, "complete-key-0000003")); code(err) != "invalid_transition" {
			t.Fatalf("complete a cancelled booking: %v", err)
		}
		b2 := e.status(t, c2.Booking.Reference)
		if got := e.topics(t, b2.ID, store.ChannelWebhook); !slices.Equal(got, []string{notify.EventCreated, notify.EventNoShow}) {
			t.Fatalf("no-show webhooks: %v", got)
		}
		if got := e.topics(t, b2.ID, store.ChannelEmail); len(got) != 2 { // the create's two e-mails, none for the no-show
			t.Fatalf("no-show e-mails: %v", got)
		}

		// Console reads: the business's list (owner: all; staff: their own)
		// and one booking's details.
		day := booking.BusinessBookingQuery{Actor: booking.BusinessActor{BusinessID: e.bizID},
			From: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 6, 8, 0, 0, 0, 0, time.UTC)}
		all, err := e.engine.BusinessBookings(ctx, day)
		if err != nil || len(all.Results) != 5 {
			t.Fatalf("owner list: %d %v", len(all.Results), err)
		}
		day.Statuses = []string{store.BookingDeclined}
		if dl, err := e.engine.BusinessBookings(ctx, day); err != nil || len(dl.Results) != 1 || dl.Results[0].Reference != p2.Booking.Reference {
			t.Fatalf("declined filter: %+v %v", dl, err)
		}
		day.Statuses, day.Actor.StaffID = nil, e.bo
		if mine, err := e.engine.BusinessBookings(ctx, day); err != nil || len(mine.Results) != 2 {
			t.Fatalf("staff list: %+v %v", mine, err)
		}
		day.StaffRef = "stf-ana"
		if _, err := e.engine.BusinessBookings(ctx, day); code(err) != "unknown_staff" {
			t.Fatalf("staff filter on another staff member: %v", err)
		}
		d, err := e.engine.BusinessBooking(ctx, st, booking.BusinessActor{BusinessID: e.bizID}, c1.Booking.Reference)
		if err != nil || d.CustomerEmail != "ann@example.com" || d.CustomerName != "ann" || d.BookedVia != "app" || d.Booking.Notes != "Please call first." {
			t.Fatalf("detail: %+v %v", d, err)
		}
		if _, err := e.engine.BusinessBooking(ctx, st, booking.BusinessActor{BusinessID: e.bizID, StaffID: e.bo}, c1.Booking.Reference); code(err) != "booking_not_found" {
			t.Fatalf("detail of another staff member's booking: %v", err)
		}
	})
}

// TestBusinessEmailsParsed delivers the person's e-mails of a pending
// create, a confirm and a decline through the outbox to the in-process SMTP
// server and reads them as a mail client would: subject, text, and the
// calendar object's METHOD, STATUS and SEQUENCE.
func TestBusinessEmailsParsed(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		e := newBizEnv(t, st)
		smtpd := testkit.NewSMTPServer(t)
		settings, err := lsmail.ParseURL(smtpd.URL())
		if err != nil {
			t.Fatal(err)
		}
		sender := &lsmail.SMTP{Composer: lsmail.Composer{From: lsmail.DefaultFrom("auth.linkslot.test"), Host: "auth.linkslot.test"}, Settings: settings}
		w := &outbox.Worker{Store: st, Channels: map[string]outbox.Deliverer{store.ChannelEmail: notify.MailDeliverer(sender)}, Clock: e.clk.Now}
		deliver := func(n int) []testkit.Mail {
			t.Helper()
			if _, err := w.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			return smtpd.WaitFor(t, n, 10*time.Second)
		}
		mailTo := func(t *testing.T, ms []testkit.Mail, to, subject string) (string, string) {
			t.Helper()
			for _, m := range ms {
				msg, parts := testkit.ParseMail(t, m.Data)
				if !strings.Contains(msg.Header.Get("To"), to) || !strings.HasPrefix(testkit.Subject(t, msg), subject) {
					continue
				}
				text, cal := testkit.FindPart(parts, "text/plain", false), testkit.FindPart(parts, "text/calendar", false)
				if text == nil || cal == nil {
					t.Fatalf("%s: parts %v", subject, parts)
				}
				return text.Body, cal.Body
			}
			t.Fatalf("no e-mail to %s with subject %q", to, subject)
			return "", ""
		}
		personMail := func(ms []testkit.Mail, subject string) (string, string) {
			t.Helper()
			return mailTo(t, ms, "ann@example.com", subject)
		}
		p := e.book(t, "svc-implant", "stf-ana", "2026-06-03T10:00:00-04:00", "pending-key-00000001")
		mails := deliver(2)
		text, cal := personMail(mails, "Requested: Implant consult at Harbor Dental")
		if biz, _ := mailTo(t, mails, "desk@harbor.example", "Requested: Implant consult at Harbor Dental"); !strings.Contains(biz, "needs your answer") ||
			!strings.Contains(biz, "Answer by: Tuesday 2 June 2026, 08:00 (America/New_York, EDT)") {
			t.Errorf("the business's pending e-mail:\n%s", biz)
		}
		for _, want := range []string{"Your booking request is pending", "will confirm or decline it by Tuesday 2 June 2026, 08:00 (America/New_York, EDT)"} {
			if !strings.Contains(text, want) {
				t.Errorf("pending text lacks %q:\n%s", want, text)
			}
		}
		for _, want := range []string{"METHOD:REQUEST", "STATUS:TENTATIVE", "SEQUENCE:1"} {
			if !strings.Contains(cal, want) {
				t.Errorf("pending calendar lacks %q:\n%s", want, cal)
			}
		}
		must(t, "confirm")(e.svc.Business(ctx, e.owner, act(p.Booking.Reference, mutation.ActionConfirm, 1, "confirm-key-00000001")))
		text, cal = personMail(deliver(4), "Confirmed: Implant consult at Harbor Dental")
		if !strings.Contains(text, "Harbor Dental confirmed your booking.") {
			t.Errorf("confirm text:\n%s", text)
		}
		for _, want := range []string{"METHOD:REQUEST", "STATUS:CONFIRMED", "SEQUENCE:2", "UID:" + p.Booking.Reference + "@auth.linkslot.test"} {
			if !strings.Contains(cal, want) {
				t.Errorf("confirm calendar lacks %q:\n%s", want, cal)
			}
		}
		p2 := e.book(t, "svc-implant", "stf-bo", "2026-06-04T09:00:00-04:00", "pending-key-00000002")
		dx := act(p2.Booking.Reference, mutation.ActionDecline, 1, "decline-key-00000001")
		dx.Reason = "We need X-rays first."
		must(t, "decline")(e.svc.Business(ctx, e.owner, dx))
		text, cal = personMail(deliver(8), "Declined: Implant consult at Harbor Dental")
		for _, want := range []string{"declined your booking request", "We need X-rays first."} {
			if !strings.Contains(text, want) {
				t.Errorf("decline text lacks %q:\n%s", want, text)
			}
		}
		for _, want := range []string{"METHOD:CANCEL", "STATUS:CANCELLED", "SEQUENCE:2"} {
			if !strings.Contains(cal, want) {
				t.Errorf("decline calendar lacks %q:\n%s", want, cal)
			}
		}
	})
}

// TestExpiryOnceAcrossProcesses runs two expiry jobs, each with its own
// mutation service and lease holder as two processes would, over one
// database, under an injected clock: every unanswered pending booking is
// declined exactly once, with one set of notifications each, and nothing
// answered in time is touched.
func TestExpiryOnceAcrossProcesses(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		e := newBizEnv(t, st)
		var refs []string
		for i, start := range []string{"2026-06-03T09:00:00-04:00", "2026-06-03T11:00:00-04:00", "2026-06-03T13:00:00-04:00", "2026-06-01T15:00:00-04:00"} {
			p := e.book(t, "svc-implant", "stf-ana", start, "pending-key-0000000"+string(rune('1'+i)))
			refs = append(refs, p.Booking.Reference)
		}
		// The last starts in a few hours: its respond-by is its start.
		if b := e.status(t, refs[3]); b.RespondBy == nil || !b.RespondBy.Equal(b.StartsAt) {
			t.Fatalf("respond_by capped at the start: %+v", b.RespondBy)
		}
		// One is answered in time.
		must(t, "confirm")(e.svc.Business(ctx, e.owner, act(refs[1], mutation.ActionConfirm, 1, "confirm-key-00000001")))

		jobs := make([]*mutation.Expirer, 2)
		for i := range jobs {
			n, err := notify.New(notify.Options{Issuer: "https://auth.linkslot.test", Clock: e.clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			engine := booking.NewService(st, e.clk.Now)
			svc := &mutation.Service{Engine: engine, Keeper: idempotency.New(st, mutation.InTx(st), e.clk.Now, 24*time.Hour),
				Notifier: n, Clock: e.clk.Now, InTx: mutation.InTx(st)}
			if jobs[i], err = mutation.NewExpirer(mutation.Expirer{Service: svc, Leases: st, Clock: e.clk.Now, Holder: "process-" + string(rune('a'+i)), Batch: 1}); err != nil {
				t.Fatal(err)
			}
		}
		run := func() int64 {
			t.Helper()
			var mu sync.Mutex
			var total int64
			var wg sync.WaitGroup
			for _, j := range jobs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n, _, err := j.RunOnce(ctx)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					total += n
					mu.Unlock()
				}()
			}
			wg.Wait()
			return total
		}
		// Before anything is due, nothing happens.
		if n := run(); n != 0 {
			t.Fatalf("declined %d before any was due", n)
		}
		// 15:00 EDT on 1 June: the short one is due (its start).
		e.clk.Set(time.Date(2026, 6, 1, 19, 0, 0, 0, time.UTC))
		if n := run(); n != 1 || e.status(t, refs[3]).Status != store.BookingDeclined {
			t.Fatalf("at its start: declined %d", n)
		}
		// A day after booking, the others are due; the confirmed one is not.
		e.clk.Set(time.Date(2026, 6, 2, 12, 0, 0, 0, time.UTC))
		if n := run(); n != 2 {
			t.Fatalf("at respond_by: declined %d, want 2", n)
		}
		if n := run(); n != 0 {
			t.Fatalf("a second pass declined %d", n)
		}
		for i, ref := range refs {
			b := e.status(t, ref)
			want, version := store.BookingDeclined, 2
			if i == 1 {
				want = store.BookingConfirmed
			}
			if b.Status != want || b.Version != version {
				t.Fatalf("%s: %s v%d, want %s v%d", ref, b.Status, b.Version, want, version)
			}
			if i == 1 {
				continue
			}
			if b.CancelReason != mutation.DeclinedUnanswered {
				t.Fatalf("%s: reason %q", ref, b.CancelReason)
			}
			if got := e.topics(t, b.ID, store.ChannelWebhook); !slices.Equal(got, []string{notify.EventDeclined, notify.EventPending}) {
				t.Fatalf("%s: webhooks %v", ref, got)
			}
			if got := e.topics(t, b.ID, store.ChannelEmail); !slices.Equal(got, []string{notify.EventDeclined, notify.EventDeclined, notify.EventPending, notify.EventPending}) {
				t.Fatalf("%s: e-mails %v", ref, got)
			}
		}
		page, err := st.ListActivity(ctx, e.ann.ID, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		expired := 0
		for _, a := range page {
			if a.Tool == mutation.OpExpire {
				expired++
				var args map[string]any
				if err := json.Unmarshal(a.Arguments, &args); err != nil || a.Via != store.ViaBusiness {
					t.Fatalf("expiry activity: %+v %v", a, err)
				}
			}
		}
		if expired != 3 {
			t.Fatalf("expiry activity entries: %d", expired)
		}
	})
}

func (e *bizEnv) count(t *testing.T, table string) int64 {
	t.Helper()
	var n int64
	if err := e.st.DB().Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}
