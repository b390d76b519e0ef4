package booking

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

func TestSearchAndCatalog(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		p, err := f.svc.SearchBusinesses(ctx, "fixture", "", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, r := range p.Results {
			refs = append(refs, r.Reference)
		}
		if strings.Join(refs, ",") != "biz-fix" || p.HasMore || p.NextOffset != nil {
			t.Fatalf("search = %v has_more=%v", refs, p.HasMore)
		}
		// A second New York appointment business, for paging.
		second := fixtureCatalogs()[0]
		second.Business.Reference, second.Business.Name = "biz-fix-2", "Second Cuts"
		if _, err := s.PutCatalog(ctx, second); err != nil {
			t.Fatal(err)
		}
		p, err = f.svc.SearchBusinesses(ctx, "", "new york", 1, 0)
		if err != nil || len(p.Results) != 1 || !p.HasMore || p.NextOffset == nil || *p.NextOffset != 1 {
			t.Fatalf("paging: %+v %v", p, err)
		}
		if _, err := f.svc.SearchBusinesses(ctx, "", "", 51, 0); code(err) != problem.CodeInvalidArgument {
			t.Fatalf("limit 51: %v", err)
		}
		if p, _ := f.svc.SearchBusinesses(ctx, "offline", "", 0, 0); len(p.Results) != 0 {
			t.Fatalf("agent-off business found: %+v", p)
		}

		cv, err := f.svc.Catalog(ctx, "biz-fix")
		if err != nil {
			t.Fatal(err)
		}
		if !cv.Business.Bookable || cv.Business.TimeZone != "America/New_York" || len(cv.Services) != 3 || len(cv.Staff) != 3 {
			t.Fatalf("catalog: %+v", cv)
		}
		js, _ := json.Marshal(cv)
		for _, want := range []string{`"service_reference":"svc-cut"`, `"staff_references":["stf-ann","stf-bob"]`, `"deposit_required":true`, `"cancellation_fee_cents":1500`} {
			if !strings.Contains(string(js), want) {
				t.Errorf("catalog JSON lacks %s: %s", want, js)
			}
		}
		if _, err := f.svc.Catalog(ctx, "biz-off"); code(err) != problem.CodeBusinessNotBookable {
			t.Fatalf("agent off: %v", err)
		}
		if _, err := f.svc.Catalog(ctx, "biz-rest"); code(err) != problem.CodeBusinessNotBookable {
			t.Fatalf("restaurant: %v, want business_not_bookable like an agent-off business", err)
		}
		if _, err := f.svc.Catalog(ctx, "biz-nope"); code(err) != problem.CodeUnknownBusiness {
			t.Fatalf("unknown: %v", err)
		}
	})
}

func TestAvailability(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		a, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-fix", ServiceRef: "svc-long", LocalDate: "2026-06-02"})
		if err != nil {
			t.Fatal(err)
		}
		if a.TimeZone != "America/New_York" || len(a.Staff) != 1 || a.Staff[0].StaffReference != "stf-ann" {
			t.Fatalf("availability: %+v", a)
		}
		// Ann's split shift: 9-12 and 13-17, 60-minute service on a 30-minute grid.
		if got := fmtSlots(a.Staff[0].Slots[:1]); got != "2026-06-02T09:00:00-04:00/2026-06-02T10:00:00-04:00" {
			t.Fatalf("first slot %s", got)
		}
		var starts []string
		for _, sl := range a.Staff[0].Slots {
			starts = append(starts, sl.StartsAt.Format("15:04"))
		}
		if strings.Join(starts, " ") != "09:00 09:30 10:00 10:30 11:00 13:00 13:30 14:00 14:30 15:00 15:30 16:00" {
			t.Fatalf("slots %v", starts)
		}
		js, _ := json.Marshal(a)
		if !strings.Contains(string(js), `"starts_at":"2026-06-02T09:00:00-04:00"`) {
			t.Fatalf("instants must carry the business offset: %s", js)
		}
		// Today: the minimum notice (60 min) after 08:00 local.
		a, _ = f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-fix", ServiceRef: "svc-cut", LocalDate: "2026-06-01", StaffRef: "stf-bob"})
		if len(a.Staff) != 1 || a.Staff[0].Slots[0].StartsAt.Format("15:04") != "09:00" {
			t.Fatalf("today: %+v", a)
		}
		f.clk.set(fixtureNow.Add(90 * time.Minute)) // 09:30 local
		a, _ = f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-fix", ServiceRef: "svc-cut", LocalDate: "2026-06-01", StaffRef: "stf-bob"})
		if a.Staff[0].Slots[0].StartsAt.Format("15:04") != "10:30" {
			t.Fatalf("notice: first slot %v", a.Staff[0].Slots[0])
		}
		cases := []struct {
			name string
			q    AvailabilityQuery
			want string
		}{
			{"unknown business", AvailabilityQuery{BusinessRef: "biz-nope", ServiceRef: "svc-cut", LocalDate: "2026-06-02"}, problem.CodeUnknownBusiness},
			{"unknown service", AvailabilityQuery{BusinessRef: "biz-fix", ServiceRef: "svc-nope", LocalDate: "2026-06-02"}, problem.CodeUnknownService},
			{"unknown staff", AvailabilityQuery{BusinessRef: "biz-fix", ServiceRef: "svc-cut", LocalDate: "2026-06-02", StaffRef: "stf-nope"}, problem.CodeUnknownStaff},
			{"staff does not perform", AvailabilityQuery{BusinessRef: "biz-fix", ServiceRef: "svc-cut", LocalDate: "2026-06-02", StaffRef: "stf-cara"}, problem.CodeStaffServiceMismatch},
			{"bad date", AvailabilityQuery{BusinessRef: "biz-fix", ServiceRef: "svc-cut", LocalDate: "tomorrow"}, problem.CodeInvalidArgument},
			{"agent off", AvailabilityQuery{BusinessRef: "biz-off", ServiceRef: "svc-x", LocalDate: "2026-06-02"}, problem.CodeBusinessNotBookable},
			{"restaurant", AvailabilityQuery{BusinessRef: "biz-rest", ServiceRef: "svc-x", LocalDate: "2026-06-02"}, problem.CodeBusinessNotBookable},
		}
		for _, c := range cases {
			if _, err := f.svc.Availability(ctx, c.q); code(err) != c.want {
				t.Errorf("%s: %v, want %s", c.name, err, c.want)
			}
		}
	})
}

var refPattern = regexp.MustCompile(`^LS-[A-Z2-9]{10}$`)

func TestCreateAndRead(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		start := nyTime(t, "2026-06-02 10:00")
		p, err := f.svc.PlanCreate(ctx, CreateRequest{AccountID: "acc_1", LinkID: "lnk_1", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob", StartsAt: start, Notes: "Short on top"})
		if err != nil {
			t.Fatal(err)
		}
		fa := p.Facts
		if fa.Action != "create" || fa.ServiceName != "Cut" || fa.BusinessName != "Fixture Cuts" || fa.StaffName != "Bob" ||
			fa.TimeZone != "America/New_York" || fa.StartsAt.Format("2006-01-02 15:04 -07:00") != "2026-06-02 10:00 -04:00" ||
			fa.EndsAt.Format("15:04") != "10:30" || fa.PriceCents != 3500 || fa.Currency != "USD" ||
			fa.CancellationFeeCents != 1500 || fa.Notes != "Short on top" {
			t.Errorf("facts behind the summary: %+v", fa)
		}
		// Planning writes nothing.
		if n, _ := s.ListAccountBookings(ctx, store.BookingFilter{AccountID: "acc_1", Status: "all", Now: fixtureNow}); len(n) != 0 {
			t.Fatal("plan wrote a booking")
		}
		var b store.Booking
		if err := s.InTx(ctx, func(tx store.Store) error { b, err = f.svc.Create(ctx, tx, p); return err }); err != nil {
			t.Fatal(err)
		}
		if !refPattern.MatchString(b.Reference) || b.Version != 1 || b.Status != store.BookingConfirmed || !b.BlockEnd.Equal(start.Add(40*time.Minute)) {
			t.Fatalf("booking %+v", b)
		}
		v, err := f.svc.MyBooking(ctx, "acc_1", strings.ToLower(b.Reference))
		if err != nil || v.StaffName != "Bob" || v.ServiceReference != "svc-cut" || v.StartsAt.Format(time.RFC3339) != "2026-06-02T10:00:00-04:00" || v.Record.LinkID != "lnk_1" {
			t.Fatalf("view %+v %v", v, err)
		}
		if _, err := f.svc.MyBooking(ctx, "acc_2", b.Reference); code(err) != problem.CodeBookingNotFound {
			t.Fatalf("other person's booking: %v", err)
		}
		if _, err := f.svc.MyBooking(ctx, "acc_1", "LS-NOPENOPE22"); code(err) != problem.CodeBookingNotFound {
			t.Fatalf("missing booking: %v", err)
		}
		pg, err := f.svc.MyBookings(ctx, "acc_1", "", 0, 0)
		if err != nil || len(pg.Results) != 1 || pg.Results[0].Reference != b.Reference {
			t.Fatalf("my bookings %+v %v", pg, err)
		}
		if pg, _ := f.svc.MyBookings(ctx, "acc_1", "cancelled", 0, 0); len(pg.Results) != 0 {
			t.Fatalf("cancelled: %+v", pg)
		}
		if _, err := f.svc.MyBookings(ctx, "acc_1", "soon", 0, 0); code(err) != problem.CodeInvalidArgument {
			t.Fatalf("bad status: %v", err)
		}
		// Bob's slots around 10:00 are gone; 10:00 is still open for Ann.
		a, _ := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-fix", ServiceRef: "svc-cut", LocalDate: "2026-06-02"})
		for _, ss := range a.Staff {
			has := func(hhmm string) bool {
				for _, sl := range ss.Slots {
					if sl.StartsAt.Format("15:04") == hhmm {
						return true
					}
				}
				return false
			}
			// 09:30 (its after-buffer), 10:00 and 10:30 (inside the padded span) are blocked.
			if ss.StaffReference == "stf-bob" && (has("09:30") || has("10:00") || has("10:30") || !has("11:00")) {
				t.Errorf("bob's slots around his booking: %v", fmtSlots(ss.Slots))
			}
			if ss.StaffReference == "stf-ann" && !has("10:00") {
				t.Errorf("ann lost 10:00")
			}
		}
		// The same slot again with Bob: slot_taken; without staff: Ann is picked.
		if _, err := f.create(ctx, CreateRequest{AccountID: "acc_2", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob", StartsAt: start}); code(err) != problem.CodeSlotTaken {
			t.Fatalf("double booking: %v", err)
		}
		b2, err := f.create(ctx, CreateRequest{AccountID: "acc_2", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StartsAt: start})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := f.svc.View(ctx, b2); v.StaffReference != "stf-ann" {
			t.Fatalf("any staff picked %s", v.StaffReference)
		}
		ev, _ := s.ListBookingEvents(ctx, b.ID)
		if len(ev) != 1 || ev[0].Action != "created" {
			t.Fatalf("events %+v", ev)
		}
	})
}

func TestCreateErrors(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		ok := CreateRequest{AccountID: "acc_1", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob", StartsAt: nyTime(t, "2026-06-03 11:00")}
		with := func(fn func(*CreateRequest)) CreateRequest { r := ok; fn(&r); return r }
		cases := []struct {
			name  string
			r     CreateRequest
			want  string
			field string
		}{
			{"unknown business", with(func(r *CreateRequest) { r.BusinessRef = "biz-nope" }), problem.CodeUnknownBusiness, "business_reference"},
			{"agent booking off", with(func(r *CreateRequest) { r.BusinessRef = "biz-off"; r.ServiceRef = "svc-x"; r.StaffRef = "stf-x" }), problem.CodeBusinessNotBookable, ""},
			{"restaurant", with(func(r *CreateRequest) { r.BusinessRef = "biz-rest" }), problem.CodeBusinessNotBookable, ""},
			{"unknown service", with(func(r *CreateRequest) { r.ServiceRef = "svc-nope" }), problem.CodeUnknownService, "service_reference"},
			{"deposit", with(func(r *CreateRequest) { r.ServiceRef = "svc-colour"; r.StaffRef = "stf-cara" }), problem.CodeDepositRequired, ""},
			{"unknown staff", with(func(r *CreateRequest) { r.StaffRef = "stf-nope" }), problem.CodeUnknownStaff, "staff_reference"},
			{"staff mismatch", with(func(r *CreateRequest) { r.StaffRef = "stf-cara" }), problem.CodeStaffServiceMismatch, "staff_reference"},
			{"no time", with(func(r *CreateRequest) { r.StartsAt = time.Time{} }), problem.CodeInvalidTime, "starts_at"},
			{"in the past", with(func(r *CreateRequest) { r.StartsAt = nyTime(t, "2026-05-31 10:00") }), problem.CodeInThePast, "starts_at"},
			{"too soon", with(func(r *CreateRequest) { r.StartsAt = nyTime(t, "2026-06-01 08:30") }), problem.CodeTooSoon, "starts_at"},
			{"beyond horizon", with(func(r *CreateRequest) { r.StartsAt = nyTime(t, "2026-07-15 10:00") }), problem.CodeBeyondHorizon, "starts_at"},
			{"off grid", with(func(r *CreateRequest) { r.StartsAt = nyTime(t, "2026-06-03 11:10") }), problem.CodeSlotTaken, ""},
			{"closed", with(func(r *CreateRequest) { r.StartsAt = nyTime(t, "2026-06-03 18:00") }), problem.CodeSlotTaken, ""},
			{"ok", ok, "", ""},
		}
		for _, c := range cases {
			_, err := f.create(ctx, c.r)
			if code(err) != c.want {
				t.Errorf("%s: %v, want %s", c.name, err, c.want)
				continue
			}
			e, _ := AsError(err)
			if e != nil && e.Field != c.field {
				t.Errorf("%s: field %q, want %q", c.name, e.Field, c.field)
			}
			if c.want == problem.CodeDepositRequired && e.BookingURL != "https://fix.example/book" {
				t.Errorf("deposit without booking_url: %+v", e)
			}
			if e != nil && e.Message == "" {
				t.Errorf("%s: empty message", c.name)
			}
		}
		if n, _ := s.ListAccountBookings(ctx, store.BookingFilter{AccountID: "acc_1", Status: "all", Now: fixtureNow, Limit: 50}); len(n) != 1 {
			t.Fatalf("%d bookings, want only the ok one", len(n))
		}
		// A plan made before someone else took the slot fails at execution.
		p, err := f.svc.PlanCreate(ctx, with(func(r *CreateRequest) { r.StartsAt = nyTime(t, "2026-06-04 11:00") }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.create(ctx, with(func(r *CreateRequest) { r.AccountID = "acc_2"; r.StartsAt = nyTime(t, "2026-06-04 11:00") })); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Create(ctx, s, p); code(err) != problem.CodeSlotTaken {
			t.Fatalf("stale plan: %v", err)
		}
	})
}

func TestReschedule(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		b, err := f.create(ctx, CreateRequest{AccountID: "acc_1", BusinessRef: "biz-fix", ServiceRef: "svc-long", StaffRef: "stf-ann", StartsAt: nyTime(t, "2026-06-02 10:00")})
		if err != nil {
			t.Fatal(err)
		}
		// Availability for the move ignores the booking itself: 10:30 overlaps its own span.
		a, err := f.svc.RescheduleAvailability(ctx, "acc_1", b.Reference, "2026-06-02", "")
		if err != nil || a.BookingReference != b.Reference || !strings.Contains(fmtSlots(a.Staff[0].Slots), "2026-06-02T10:30:00-04:00") {
			t.Fatalf("reschedule availability %v %v", fmtSlots(a.Staff[0].Slots), err)
		}
		if _, err := f.svc.RescheduleAvailability(ctx, "acc_2", b.Reference, "2026-06-02", ""); code(err) != problem.CodeBookingNotFound {
			t.Fatalf("other person: %v", err)
		}
		p, err := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: b.Reference, NewStartsAt: nyTime(t, "2026-06-02 10:30")})
		if err != nil {
			t.Fatal(err)
		}
		if fa := p.Facts; fa.PreviousStartsAt.Format("2006-01-02 15:04") != "2026-06-02 10:00" || fa.PreviousEndsAt.Format("15:04") != "11:00" ||
			fa.StartsAt.Format("2006-01-02 15:04") != "2026-06-02 10:30" || fa.EndsAt.Format("15:04") != "11:30" || fa.BookingVersion != 1 {
			t.Fatalf("facts behind the summary: %+v", fa)
		}
		var moved store.Booking
		if err := s.InTx(ctx, func(tx store.Store) error { moved, err = f.svc.Reschedule(ctx, tx, p); return err }); err != nil {
			t.Fatal(err)
		}
		if moved.Reference != b.Reference || moved.Version != 2 || !moved.StartsAt.Equal(nyTime(t, "2026-06-02 10:30")) {
			t.Fatalf("moved %+v", moved)
		}
		ev, _ := s.ListBookingEvents(ctx, b.ID)
		if len(ev) != 2 || ev[1].Action != "rescheduled" || ev[1].Version != 2 || !ev[1].StartsAt.Equal(b.StartsAt) {
			t.Fatalf("events %+v", ev)
		}
		// The old plan is stale now: version changed.
		if _, err := f.svc.Reschedule(ctx, s, p); code(err) != problem.CodeBookingChanged || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stale plan: %v", err)
		}
		// Move to another staff member who does not perform it / does.
		if _, err := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: b.Reference, NewStartsAt: nyTime(t, "2026-06-02 14:00"), StaffRef: "stf-bob"}); code(err) != problem.CodeStaffServiceMismatch {
			t.Fatalf("mismatch: %v", err)
		}
		// Collide with another booking.
		if _, err := f.create(ctx, CreateRequest{AccountID: "acc_2", BusinessRef: "biz-fix", ServiceRef: "svc-long", StaffRef: "stf-ann", StartsAt: nyTime(t, "2026-06-02 14:00")}); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			at   string
			want string
		}{
			{"taken", "2026-06-02 14:30", problem.CodeSlotTaken},
			{"past", "2026-05-30 10:00", problem.CodeInThePast},
			{"too soon", "2026-06-01 08:30", problem.CodeTooSoon},
			{"horizon", "2026-08-01 10:00", problem.CodeBeyondHorizon},
			{"ok", "2026-06-02 15:00", ""},
		}
		for _, c := range cases {
			_, err := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: b.Reference, NewStartsAt: nyTime(t, c.at)})
			if code(err) != c.want {
				t.Errorf("%s: %v, want %s", c.name, err, c.want)
			}
		}
		// Two concurrent moves from the same version: one wins, the other answers booking_changed.
		p1, _ := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: b.Reference, NewStartsAt: nyTime(t, "2026-06-02 15:00")})
		p2, _ := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: b.Reference, NewStartsAt: nyTime(t, "2026-06-02 16:00")})
		if _, err := f.svc.Reschedule(ctx, s, p1); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Reschedule(ctx, s, p2); code(err) != problem.CodeBookingChanged {
			t.Fatalf("second move: %v", err)
		}
		// Cancelled bookings cannot move.
		cp, _ := f.svc.PlanCancel(ctx, CancelRequest{AccountID: "acc_1", BookingRef: b.Reference})
		if _, err := f.svc.Cancel(ctx, s, cp); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: b.Reference, NewStartsAt: nyTime(t, "2026-06-02 16:00")}); code(err) != problem.CodeAlreadyCancelled {
			t.Fatalf("move cancelled: %v", err)
		}
	})
}

func TestCancel(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		mk := func(at string) store.Booking {
			b, err := f.create(ctx, CreateRequest{AccountID: "acc_1", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob", StartsAt: nyTime(t, at)})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		late, early := mk("2026-06-01 15:00"), mk("2026-06-05 10:00")
		cases := []struct {
			name string
			b    store.Booking
			fee  int64
		}{
			{"inside the 24h window costs the fee", late, 1500},
			{"outside the window is free", early, 0},
		}
		for _, c := range cases {
			p, err := f.svc.PlanCancel(ctx, CancelRequest{AccountID: "acc_1", BookingRef: c.b.Reference, Reason: "Plans changed"})
			if err != nil || p.FeeCents != c.fee || p.AlreadyCancelled {
				t.Fatalf("%s: plan %+v %v", c.name, p, err)
			}
			if p.Facts.FeeNow != c.fee {
				t.Errorf("%s: fee in the summary's facts = %d, want %d", c.name, p.Facts.FeeNow, c.fee)
			}
			var out store.Booking
			if err := s.InTx(ctx, func(tx store.Store) error { out, err = f.svc.Cancel(ctx, tx, p); return err }); err != nil {
				t.Fatal(err)
			}
			if out.Status != store.BookingCancelled || out.Version != 2 || out.CancellationFeeCents != c.fee || out.CancelReason != "Plans changed" {
				t.Fatalf("%s: %+v", c.name, out)
			}
			// Cancelling again is reported, not failed; a stale plan answers already_cancelled.
			again, err := f.svc.PlanCancel(ctx, CancelRequest{AccountID: "acc_1", BookingRef: c.b.Reference})
			if err != nil || !again.AlreadyCancelled {
				t.Fatalf("again %+v %v", again, err)
			}
			if b, err := f.svc.Cancel(ctx, s, again); err != nil || b.Version != 2 {
				t.Fatalf("cancel already cancelled: %+v %v", b, err)
			}
			if _, err := f.svc.Cancel(ctx, s, p); code(err) != problem.CodeAlreadyCancelled {
				t.Fatalf("stale cancel: %v", err)
			}
		}
		// The slot is free again.
		if _, err := f.create(ctx, CreateRequest{AccountID: "acc_2", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob", StartsAt: nyTime(t, "2026-06-01 15:00")}); err != nil {
			t.Fatalf("rebook freed slot: %v", err)
		}
		// Started bookings: cancellation_closed. Active payment: payment_active.
		b := mk("2026-06-01 10:00")
		f.clk.set(nyTime(t, "2026-06-01 10:05"))
		if _, err := f.svc.PlanCancel(ctx, CancelRequest{AccountID: "acc_1", BookingRef: b.Reference}); code(err) != problem.CodeCancellationClosed {
			t.Fatalf("started: %v", err)
		}
		f.clk.set(fixtureNow)
		paid := mk("2026-06-06 10:00")
		if _, err := s.UpdateBooking(ctx, paid.ID, func(b store.Booking) (store.Booking, error) { b.PaymentState = store.PaymentDepositHeld; return b, nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.PlanCancel(ctx, CancelRequest{AccountID: "acc_1", BookingRef: paid.Reference}); code(err) != problem.CodePaymentActive {
			t.Fatalf("payment: %v", err)
		}
		if _, err := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: paid.Reference, NewStartsAt: nyTime(t, "2026-06-06 11:00")}); code(err) != problem.CodePaymentActive {
			t.Fatalf("payment reschedule: %v", err)
		}
		if _, err := f.svc.PlanCancel(ctx, CancelRequest{AccountID: "acc_2", BookingRef: paid.Reference}); code(err) != problem.CodeBookingNotFound {
			t.Fatalf("other person: %v", err)
		}
	})
}

// TestFailedMutationRollsBack: an error after the booking write (here the
// caller's own step in the same transaction) leaves nothing behind.
func TestFailedMutationRollsBack(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		b, err := f.create(ctx, CreateRequest{AccountID: "acc_1", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob", StartsAt: nyTime(t, "2026-06-03 10:00")})
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_1", BookingRef: b.Reference, NewStartsAt: nyTime(t, "2026-06-03 12:00")})
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("activity write failed")
		err = s.InTx(ctx, func(tx store.Store) error {
			if _, err := f.svc.Reschedule(ctx, tx, p); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		got, _ := s.GetBooking(ctx, b.ID)
		if got.Version != 1 || !got.StartsAt.Equal(b.StartsAt) {
			t.Fatalf("booking changed: %+v", got)
		}
		if ev, _ := s.ListBookingEvents(ctx, b.ID); len(ev) != 1 {
			t.Fatalf("events %+v", ev)
		}
	})
}

func TestDemoCatalogs(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s, DemoCatalogs(fixtureNow)...)
		zones, restaurant, off, deposit := map[string]bool{}, false, false, false
		for _, c := range DemoCatalogs(fixtureNow) {
			b := c.Business
			zones[b.TimeZone] = true
			restaurant = restaurant || b.Category == store.CategoryRestaurant
			off = off || !b.AgentBooking
			for _, sv := range c.Services {
				if sv.DepositRequired && b.BookingURL != "" {
					deposit = true
				}
			}
			if b.AgentBooking && b.Category == store.CategoryAppointment {
				cv, err := f.svc.Catalog(ctx, b.Reference)
				if err != nil {
					t.Fatal(err)
				}
				open := 0
				for d, day := 0, fixtureNow; d < 14; d++ {
					for _, sv := range cv.Services {
						a, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: b.Reference, ServiceRef: sv.Reference, LocalDate: day.Format("2006-01-02")})
						if err != nil {
							t.Fatal(err)
						}
						for _, st := range a.Staff {
							open += len(st.Slots)
						}
					}
					day = day.AddDate(0, 0, 1)
				}
				if open == 0 {
					t.Errorf("%s has no open slot in two weeks", b.Reference)
				}
			}
		}
		if len(DemoCatalogs(fixtureNow)) < 6 || len(zones) < 3 || !restaurant || !off || !deposit {
			t.Fatalf("demo data: %d businesses, zones %v, restaurant %v, off %v, deposit %v", len(DemoCatalogs(fixtureNow)), zones, restaurant, off, deposit)
		}
		// Marcus's day off (ten days ahead, a whole New York day) has no slots.
		ny, _ := time.LoadLocation("America/New_York")
		offDay := fixtureNow.In(ny).AddDate(0, 0, 10).Format("2006-01-02")
		a, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-brightcut-barbers", ServiceRef: "svc-classic-haircut", LocalDate: offDay, StaffRef: "stf-marcus-reid"})
		if err != nil || len(a.Staff[0].Slots) != 0 {
			t.Fatalf("day off %s: %v %s", offDay, err, fmtSlots(a.Staff[0].Slots))
		}
		next := fixtureNow.In(ny).AddDate(0, 0, 9).Format("2006-01-02")
		if a, _ := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-brightcut-barbers", ServiceRef: "svc-classic-haircut", LocalDate: next, StaffRef: "stf-marcus-reid"}); len(a.Staff[0].Slots) == 0 {
			t.Fatalf("Marcus has no slots on %s either", next)
		}
		// DemoBarberDay is a day on which both haircut barbers have slots,
		// however many days ahead it is asked for (the day off included),
		// and from whichever weekday.
		for days := 0; days <= 14; days++ {
			day := DemoBarberDay(fixtureNow, days)
			for _, staff := range []string{"stf-marcus-reid", "stf-dana-kowalski"} {
				a, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-brightcut-barbers", ServiceRef: "svc-classic-haircut", LocalDate: day, StaffRef: staff})
				if err != nil || len(a.Staff) != 1 || len(a.Staff[0].Slots) < 2 {
					t.Fatalf("DemoBarberDay(now, %d) = %s: %s has too few slots (%v)", days, day, staff, err)
				}
			}
		}
		for k := 0; k < 7; k++ {
			now := fixtureNow.AddDate(0, 0, k)
			earliest := now.In(ny).AddDate(0, 0, 3)
			want := earliest
			for want.Weekday() == time.Sunday || want.Weekday() == time.Monday {
				want = want.AddDate(0, 0, 1)
			}
			if got := DemoBarberDay(now, 3); got != want.Format("2006-01-02") {
				t.Fatalf("DemoBarberDay(%s, 3) = %s, want %s, the first Tuesday to Saturday from %s", now.Weekday(), got, want.Format("2006-01-02"), earliest.Format("2006-01-02"))
			}
		}
		// Loading twice is idempotent.
		for _, c := range DemoCatalogs(fixtureNow) {
			if _, err := s.PutCatalog(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestSearchRefusalsAndSuggestions: a query of only punctuation, or over
// 200 characters, is refused with invalid_argument naming the field before
// any statement runs; a first page that finds nothing carries the
// catalog's spelling of a misspelled word (docs/design.md, "Business
// search"), on both backends.
func TestSearchRefusalsAndSuggestions(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		for _, c := range []struct{ name, query, city, field string }{
			{"punctuation only", "?!… -- ***", "", "query"},
			{"201 characters", strings.Repeat("é", 201), "", "query"},
			{"a 201-character city", "cuts", strings.Repeat("x", 201), "city"},
		} {
			_, err := f.svc.SearchBusinesses(ctx, c.query, c.city, 0, 0)
			var pe *problem.Error
			if code(err) != problem.CodeInvalidArgument || !errors.As(err, &pe) || pe.Field != c.field {
				t.Errorf("%s: %v, want invalid_argument naming %s", c.name, err, c.field)
			}
		}
		if p, err := f.svc.SearchBusinesses(ctx, strings.Repeat("é", 200), "", 0, 0); err != nil || len(p.Results) != 0 {
			t.Errorf("200 characters: %+v %v, want an empty answer", p, err)
		}
		p, err := f.svc.SearchBusinesses(ctx, "fixtre", "", 0, 0)
		if err != nil || len(p.Results) != 0 || strings.Join(p.Suggestions, ",") != "fixture" {
			t.Fatalf("fixtre: %+v %v, want no results and the suggestion fixture", p, err)
		}
		if p, err := f.svc.SearchBusinesses(ctx, "fixture", "", 0, 0); err != nil || len(p.Results) != 1 || p.Suggestions != nil {
			t.Fatalf("fixture: %+v %v, want one result and no suggestions", p, err)
		}
	})
}
