package mutation_test

// The mutation protocol end to end at the domain level, on both backends:
// the real Service over the booking engine, booking grants, internal/confirm
// and idempotency keys — what the MCP tools and the web pages call.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

var ctx = context.Background()

type clock = testkit.Clock

// notifier records the changes it is handed and fails when told to.
type notifier struct {
	mu      sync.Mutex
	changes []mutation.Change
	fail    error
}

func (n *notifier) Notify(ctx context.Context, tx mutation.NotifyTx, c mutation.Change) (mutation.Notified, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail != nil {
		return mutation.Notified{}, n.fail
	}
	// Written through tx: it must vanish with a rolled-back mutation.
	// (An audit row, which a Notifier cannot write: the concrete
	// transaction has it.)
	if err := tx.(store.Audit).AddAuditEvent(ctx, store.AuditEvent{ActorID: c.Person.ID, Action: "notify." + c.Kind, Target: c.After.Reference, CreatedAt: c.After.UpdatedAt}); err != nil {
		return mutation.Notified{}, err
	}
	n.changes = append(n.changes, c)
	return mutation.Notified{Person: "queued", Business: "none", Webhooks: len(n.changes)}, nil
}

type env struct {
	st   *sqlstore.Store
	clk  *clock
	svc  *mutation.Service
	note *notifier
	acct store.Account
}

func newEnv(t *testing.T, st *sqlstore.Store) *env {
	t.Helper()
	var hours []store.HoursWindow
	for d := time.Sunday; d <= time.Saturday; d++ {
		hours = append(hours, store.HoursWindow{Weekday: d, StartMin: 9 * 60, EndMin: 17 * 60})
	}
	_, err := st.PutCatalog(ctx, store.Catalog{
		Business: store.Business{Reference: "biz-ny", Name: "Harbor Dental", Category: store.CategoryAppointment, City: "New York",
			Address: "12 Water St", TimeZone: "America/New_York", AgentBooking: true, MinNoticeMinutes: 60, HorizonDays: 30,
			SlotIntervalMinutes: 15, CancellationWindowMinutes: 24 * 60, CancellationFeeCents: 2500, Currency: "USD",
			CancellationPolicy: "Please give 24 hours' notice."},
		OpeningHours: hours,
		Services:     []store.Service{{Reference: "svc-clean", Name: "Cleaning", DurationMinutes: 45, PriceCents: 12000, Currency: "USD"}},
		Staff: []store.Staff{{Reference: "stf-ana", Name: "Dr. Ana Ruiz", ServiceIDs: []string{"svc-clean"}},
			{Reference: "stf-bo", Name: "Dr. Bo Chen", ServiceIDs: []string{"svc-clean"}}},
		StaffHours: map[string][]store.HoursWindow{"stf-ana": hours, "stf-bo": hours},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	acct := store.Account{ID: "acc_ann", Email: "ann@example.com", PasswordHash: "x", CreatedAt: c.Now(), UpdatedAt: c.Now()}
	if err := st.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	km := keys.NewManager(st, []byte("protocol test secret, long enough"), "booking-grant", c.Now)
	if err := km.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	n := &notifier{}
	svc := &mutation.Service{Engine: booking.NewService(st, c.Now), Grants: grant.New(km, c.Now),
		Keeper: idempotency.New(st, mutation.InTx(st), c.Now, 24*time.Hour), Notifier: n, Clock: c.Now}
	return &env{st: st, clk: c, svc: svc, note: n, acct: acct}
}

func (e *env) count(t *testing.T, table string) int64 {
	t.Helper()
	var n int64
	if err := e.st.DB().Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func confirmed(summary, key string) mutation.Confirmation {
	y := true
	text := "Yes, go ahead."
	return mutation.Confirmation{ConfirmedSummary: &summary, SummaryPresented: &y, ConfirmationObtained: &y, UserConfirmationText: &text, IdempotencyKey: &key}
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func code(err error) string {
	if e, ok := booking.AsError(err); ok {
		return e.Code
	}
	if err != nil {
		return "internal: " + err.Error()
	}
	return ""
}

// must fails the test unless the call answered an Outcome.
func must(t *testing.T, what string) func(mutation.Outcome, error) mutation.Outcome {
	return func(o mutation.Outcome, err error) mutation.Outcome {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return o
	}
}

func TestProtocol(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		e := newEnv(t, st)
		ann := mutation.Caller{AccountID: e.acct.ID, LinkID: "lnk_agent1", ClientID: "cli_1", Channel: mutation.ChannelAgent}
		other := mutation.Caller{AccountID: e.acct.ID, LinkID: "lnk_agent2", ClientID: "cli_2", Channel: mutation.ChannelAgent}
		svc := e.svc

		// Create: preview, then execute with the summary unchanged.
		cr := mutation.CreateRequest{BusinessRef: "biz-ny", ServiceRef: "svc-clean", StaffRef: "stf-ana",
			StartsAt: at(t, "2026-06-03T10:00:00-04:00"), Notes: "First visit."}
		pre := must(t, "preview")(svc.Create(ctx, ann, cr, mutation.Confirmation{}))
		if pre.Status != mutation.StatusConfirmationRequired || pre.Summary == "" || pre.Refused() || pre.Facts.BusinessName != "Harbor Dental" || e.count(t, "bookings") != 0 {
			t.Fatalf("preview: %+v", pre)
		}
		// A partial confirmation is refused with the missing fields.
		partial := confirmed(pre.Summary, "create-key-000000001")
		partial.ConfirmationObtained = nil
		if o := must(t, "partial")(svc.Create(ctx, ann, cr, partial)); !o.Refused() || len(o.Missing) != 1 || o.Missing[0] != mutation.FieldConfirmationObtained {
			t.Fatalf("partial: %+v", o)
		}
		created := must(t, "create")(svc.Create(ctx, ann, cr, confirmed(pre.Summary, "create-key-000000001")))
		if created.Status != mutation.StatusConfirmed || created.Grant == "" || created.Booking == nil || created.Booking.Version != 1 ||
			created.Notified == nil || created.Notified.Person != "queued" || created.Replay {
			t.Fatalf("create: %+v", created)
		}
		if len(e.note.changes) != 1 || e.note.changes[0].Kind != mutation.KindCreated || e.note.changes[0].Before != nil ||
			e.note.changes[0].Person.Email != "ann@example.com" || e.note.changes[0].Business.Reference != "biz-ny" ||
			e.note.changes[0].Caller.LinkID != ann.LinkID || e.note.changes[0].Summary != pre.Summary {
			t.Fatalf("notified change: %+v", e.note.changes)
		}
		// Replay: the same booking, grant and notification report; nothing new.
		again := must(t, "replay")(svc.Create(ctx, ann, cr, confirmed(pre.Summary, "create-key-000000001")))
		if !again.Replay || again.Booking.Reference != created.Booking.Reference || again.Grant != created.Grant ||
			again.Notified == nil || *again.Notified != *created.Notified || !again.Booking.StartsAt.Equal(created.Booking.StartsAt) {
			t.Fatalf("replay: %+v", again)
		}
		// Conflict: the key with other arguments.
		cr2 := cr
		cr2.StartsAt = at(t, "2026-06-03T11:00:00-04:00")
		if _, err := svc.Create(ctx, ann, cr2, confirmed(pre.Summary, "create-key-000000001")); code(err) != "idempotency_conflict" {
			t.Fatalf("conflict: %v", err)
		}
		// A malformed key fails before anything else.
		if _, err := svc.Create(ctx, ann, cr2, confirmed(pre.Summary, "short")); code(err) != "invalid_idempotency_key" {
			t.Fatalf("short key: %v", err)
		}
		if e.count(t, "bookings") != 1 || e.count(t, "activities") != 1 || len(e.note.changes) != 1 {
			t.Fatal("replay or conflict wrote")
		}
		ref, g1 := created.Booking.Reference, created.Grant

		// Reschedule with a stale summary: summary_changed, nothing moved.
		rr := mutation.RescheduleRequest{BookingRef: ref, Grant: g1, StartsAt: at(t, "2026-06-04T14:00:00-04:00")}
		if o := must(t, "stale")(svc.Reschedule(ctx, ann, rr, confirmed(pre.Summary, "move-key-00000000001"))); o.Status != mutation.StatusSummaryChanged || !o.Refused() || o.Summary == "" {
			t.Fatalf("stale summary: %+v", o)
		}
		// A grant used by another link of the same person: invalid_grant.
		if _, err := svc.Reschedule(ctx, other, rr, mutation.Confirmation{}); code(err) != "invalid_grant" {
			t.Fatalf("other link: %v", err)
		}
		// A fault between the booking write and the record (the notifier
		// fails inside the transaction): neither stays.
		preview := must(t, "move preview")(svc.Reschedule(ctx, ann, rr, mutation.Confirmation{}))
		move := confirmed(preview.Summary, "move-key-00000000002")
		e.note.fail = errors.New("injected fault")
		if _, err := svc.Reschedule(ctx, ann, rr, move); err == nil || code(err) == "" {
			t.Fatalf("fault: %v", err)
		}
		e.note.fail = nil
		if b, _ := st.GetBookingByReference(ctx, ref); b.Version != 1 || e.count(t, "idempotency_records") != 1 ||
			e.count(t, "activities") != 1 || e.count(t, "audit_events") != 1 {
			t.Fatalf("after fault: version %d", b.Version)
		}
		// The same key again executes; the version bumps and the grant rotates.
		moved := must(t, "move")(svc.Reschedule(ctx, ann, rr, move))
		if moved.Status != mutation.StatusRescheduled || moved.Booking.Version != 2 || moved.Grant == g1 {
			t.Fatalf("reschedule: %+v", moved)
		}
		if c := e.note.changes[1]; c.Kind != mutation.KindRescheduled || c.Before == nil || c.Before.Version != 1 || c.After.Version != 2 {
			t.Fatalf("reschedule change: %+v", c)
		}
		// A retry with the superseded grant and the old summary replays.
		if r := must(t, "move replay")(svc.Reschedule(ctx, ann, rr, move)); !r.Replay || r.Grant != moved.Grant {
			t.Fatalf("replay after move: %+v", r)
		}
		// The old grant on a new request: invalid_grant.
		rr3 := rr
		rr3.StartsAt = at(t, "2026-06-05T14:00:00-04:00")
		if _, err := svc.Reschedule(ctx, ann, rr3, mutation.Confirmation{}); code(err) != "invalid_grant" {
			t.Fatalf("superseded grant: %v", err)
		}

		// Cancel with the rotated grant; the answer carries the next one.
		xr := mutation.CancelRequest{BookingRef: ref, Grant: moved.Grant, Reason: "Travelling"}
		xp := must(t, "cancel preview")(svc.Cancel(ctx, ann, xr, mutation.Confirmation{}))
		if xp.Status != mutation.StatusConfirmationRequired {
			t.Fatalf("cancel preview: %+v", xp)
		}
		// Past the appointment start, the authentic grant has expired.
		saved := e.clk.Now()
		e.clk.Add(5 * 24 * time.Hour)
		if _, err := svc.Cancel(ctx, ann, xr, mutation.Confirmation{}); code(err) != "expired_grant" {
			t.Fatalf("expired: %v", err)
		}
		e.clk.Set(saved)
		cancelled := must(t, "cancel")(svc.Cancel(ctx, ann, xr, confirmed(xp.Summary, "cancel-key-000000001")))
		if cancelled.Status != mutation.StatusCancelled || cancelled.Booking.Version != 3 || cancelled.AlreadyCancelled {
			t.Fatalf("cancel: %+v", cancelled)
		}
		// Cancelling again: already cancelled, nothing recorded, in either step.
		xr.Grant = cancelled.Grant
		if o := must(t, "again")(svc.Cancel(ctx, ann, xr, mutation.Confirmation{})); !o.AlreadyCancelled || o.Status != mutation.StatusCancelled || o.Booking == nil {
			t.Fatalf("already cancelled: %+v", o)
		}
		if e.count(t, "activities") != 3 || e.count(t, "idempotency_records") != 3 || len(e.note.changes) != 3 {
			t.Fatalf("activities %d records %d", e.count(t, "activities"), e.count(t, "idempotency_records"))
		}
		acts := activities(t, st, e.acct.ID)
		if len(acts) != 3 || acts[mutation.OpCancel].Via != store.ViaAgent || acts[mutation.OpCancel].LinkID != ann.LinkID ||
			acts[mutation.OpCancel].ClientID != ann.ClientID {
			t.Fatalf("activity: %+v", acts)
		}
	})
}

// activities are an account's Activity entries by tool (one each).
func activities(t *testing.T, st store.Store, accountID string) map[string]store.Activity {
	t.Helper()
	l, err := st.ListActivity(ctx, accountID, 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]store.Activity{}
	for _, a := range l {
		m[a.Tool] = a
	}
	return m
}

// A person on the web: no link, no grant; keys scoped to the account;
// Activity says "web".
func TestWebCaller(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		e := newEnv(t, st)
		agent := mutation.Caller{AccountID: e.acct.ID, LinkID: "lnk_agent1", ClientID: "cli_1", Channel: mutation.ChannelAgent}
		web := mutation.Caller{AccountID: e.acct.ID, Channel: mutation.ChannelWeb}
		cr := mutation.CreateRequest{BusinessRef: "biz-ny", ServiceRef: "svc-clean", StaffRef: "stf-bo", StartsAt: at(t, "2026-06-03T10:00:00-04:00")}
		pre := must(t, "preview")(e.svc.Create(ctx, agent, cr, mutation.Confirmation{}))
		b := must(t, "create")(e.svc.Create(ctx, agent, cr, confirmed(pre.Summary, "same-key-0000000001")))

		xr := mutation.CancelRequest{BookingRef: b.Booking.Reference}
		xp := must(t, "web preview")(e.svc.Cancel(ctx, web, xr, mutation.Confirmation{}))
		if xp.Status != mutation.StatusConfirmationRequired || xp.Summary == "" {
			t.Fatalf("web preview: %+v", xp)
		}
		// The same key as the agent's create: another scope, so no conflict.
		done := must(t, "web cancel")(e.svc.Cancel(ctx, web, xr, confirmed(xp.Summary, "same-key-0000000001")))
		if done.Status != mutation.StatusCancelled || done.Grant != "" || done.Booking.Version != 2 || done.Notified == nil {
			t.Fatalf("web cancel: %+v", done)
		}
		if c := e.note.changes[1]; c.Caller.Channel != mutation.ChannelWeb || c.Kind != mutation.KindCancelled {
			t.Fatalf("web change: %+v", c)
		}
		if r := must(t, "web replay")(e.svc.Cancel(ctx, web, xr, confirmed(xp.Summary, "same-key-0000000001"))); !r.Replay || r.Booking.Version != 2 {
			t.Fatalf("web replay: %+v", r)
		}
		acts := activities(t, st, e.acct.ID)
		if w, ok := acts["web:"+mutation.OpCancel]; len(acts) != 2 || !ok || w.Via != store.ViaWeb || w.LinkID != "" || w.ClientID != "" ||
			acts[mutation.OpCreate].Via != store.ViaAgent {
			t.Fatalf("activity: %+v", acts)
		}
		// Another person's booking is not found, on the web too.
		if _, err := e.svc.Cancel(ctx, mutation.Caller{AccountID: "acc_other", Channel: mutation.ChannelWeb}, xr, mutation.Confirmation{}); code(err) != problem.CodeBookingNotFound {
			t.Fatalf("another person's booking: %v", err)
		}
	})
}

// Text over the limit is refused before anything else, naming its field.
func TestTextLimit(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	long := string(make([]rune, booking.MaxNotes+1))
	ann := mutation.Caller{AccountID: e.acct.ID, LinkID: "lnk", Channel: mutation.ChannelAgent}
	_, err := e.svc.Create(ctx, ann, mutation.CreateRequest{BusinessRef: "biz-ny", ServiceRef: "svc-clean", StaffRef: "stf-ana",
		StartsAt: at(t, "2026-06-03T10:00:00-04:00"), Notes: long}, mutation.Confirmation{})
	if be, ok := booking.AsError(err); !ok || be.Code != problem.CodeInvalidArgument || be.Field != "notes" {
		t.Fatalf("long notes: %v", err)
	}
	_, err = e.svc.Cancel(ctx, ann, mutation.CancelRequest{BookingRef: "LS-X", Grant: "g", Reason: long}, mutation.Confirmation{})
	if be, ok := booking.AsError(err); !ok || be.Field != "reason" {
		t.Fatalf("long reason: %v", err)
	}
}
