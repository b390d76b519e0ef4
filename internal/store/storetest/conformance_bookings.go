package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// newBooking builds a booking of a service with a staff member, its blocked
// span padded by the service's buffers.
func newBooking(c store.Catalog, staff, service string, start time.Time, status string) store.Booking {
	sv := svcByRef(c, service)
	end := start.Add(time.Duration(sv.DurationMinutes) * time.Minute)
	b := store.Booking{ID: store.NewID("bkg"), Reference: "LS-" + store.RandomString(5), BusinessID: c.Business.ID,
		ServiceID: sv.ID, StaffID: staffByRef(c, staff).ID, AccountID: "acc_p", LinkID: "lnk_p",
		StartsAt: start, EndsAt: end,
		BlockStart: start.Add(-time.Duration(sv.BufferBeforeMinutes) * time.Minute),
		BlockEnd:   end.Add(time.Duration(sv.BufferAfterMinutes) * time.Minute),
		Status:     status, Version: 1, PriceCents: sv.PriceCents, Currency: sv.Currency, CreatedAt: t0, UpdatedAt: t0}
	if status == store.BookingCancelled {
		ca := t0
		b.CancelledAt = &ca
	}
	return b
}

func bookingIDs(l []store.Booking) []string {
	var out []string
	for _, b := range l {
		out = append(out, b.ID)
	}
	return out
}

func testBookings(t *testing.T, s store.Store) {
	c := putSample(t, s)
	// cut: 30 min + 10 min buffer after. 10:00 blocks [10:00, 10:40).
	b1 := newBooking(c, "ana", "cut", at(10, 0), store.BookingConfirmed)
	b1.Notes, b1.PaymentState, b1.CancelReason, b1.CancellationFeeCents = "window seat", store.PaymentDepositHeld, "", 500
	b1.StartsAt = b1.StartsAt.Add(789 * time.Nanosecond) // sub-microsecond noise is dropped
	must(t, s.InsertBooking(ctx, b1))
	got, err := s.GetBooking(ctx, b1.ID)
	must(t, err)
	want := b1
	want.StartsAt = store.UTC(b1.StartsAt)
	for _, f := range []struct {
		name      string
		got, want time.Time
	}{{"StartsAt", got.StartsAt, want.StartsAt}, {"EndsAt", got.EndsAt, want.EndsAt}, {"BlockStart", got.BlockStart, want.BlockStart},
		{"BlockEnd", got.BlockEnd, want.BlockEnd}, {"CreatedAt", got.CreatedAt, want.CreatedAt}, {"UpdatedAt", got.UpdatedAt, want.UpdatedAt}} {
		sameInstant(t, f.name, f.got, f.want)
	}
	got.StartsAt, got.EndsAt, got.BlockStart, got.BlockEnd, got.CreatedAt, got.UpdatedAt = want.StartsAt, want.EndsAt, want.BlockStart, want.BlockEnd, want.CreatedAt, want.UpdatedAt
	want.StartsAt, want.EndsAt, want.BlockStart, want.BlockEnd, want.CreatedAt, want.UpdatedAt = store.UTC(want.StartsAt), store.UTC(want.EndsAt), store.UTC(want.BlockStart), store.UTC(want.BlockEnd), store.UTC(want.CreatedAt), store.UTC(want.UpdatedAt)
	got.StartsAt, got.EndsAt, got.BlockStart, got.BlockEnd, got.CreatedAt, got.UpdatedAt = want.StartsAt, want.EndsAt, want.BlockStart, want.BlockEnd, want.CreatedAt, want.UpdatedAt
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("GetBooking =\n %+v\nwant\n %+v", got, want)
	}
	byRef, err := s.GetBookingByReference(ctx, b1.Reference)
	must(t, err)
	if byRef.ID != b1.ID {
		t.Errorf("GetBookingByReference = %s", byRef.ID)
	}
	_, err = s.GetBooking(ctx, "bkg_missing")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.GetBookingByReference(ctx, "LS-missing")
	wantErr(t, err, store.ErrNotFound)
	dup := newBooking(c, "ben", "cut", at(16, 0), store.BookingConfirmed)
	dup.Reference = b1.Reference
	wantErr(t, s.InsertBooking(ctx, dup), store.ErrAlreadyExists)

	cases := []struct {
		name  string
		staff string
		svc   string
		start time.Time
		want  error
	}{
		{"same slot", "ana", "cut", at(10, 0), store.ErrOverlap},
		{"into the buffer after", "ana", "cut", at(10, 35), store.ErrOverlap},
		{"adjacent to the buffer", "ana", "cut", at(10, 40), nil},
		{"earlier, apart", "ana", "color", at(8, 30), nil},                       // blocks [8:25, 9:30)
		{"buffer before overlaps", "ana", "color", at(11, 23), store.ErrOverlap}, // blocks [11:18, ...) vs [10:40, 11:20)
		{"buffer before adjacent", "ana", "color", at(11, 25), nil},              // blocks [11:20, 12:25)
		{"other staff same time", "ben", "cut", at(10, 0), nil},
		{"cancelled never blocks", "ana", "cut", at(10, 0), nil}, // inserted as cancelled below
	}
	for _, tc := range cases {
		status := store.BookingConfirmed
		if tc.name == "cancelled never blocks" {
			status = store.BookingCancelled
		}
		err := s.InsertBooking(ctx, newBooking(c, tc.staff, tc.svc, tc.start, status))
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: InsertBooking = %v, want %v", tc.name, err, tc.want)
		}
	}

	// UpdateBooking: moving within its own span does not conflict with itself.
	moved, err := s.UpdateBooking(ctx, b1.ID, func(b store.Booking) (store.Booking, error) {
		b.StartsAt, b.EndsAt = b.StartsAt.Add(-5*time.Minute), b.EndsAt.Add(-5*time.Minute)
		b.BlockStart, b.BlockEnd = b.BlockStart.Add(-5*time.Minute), b.BlockEnd.Add(-5*time.Minute)
		b.Version++
		b.UpdatedAt = t0.Add(time.Hour)
		b.ID, b.Reference = "bkg_other", "LS-other" // ignored
		return b, nil
	})
	if err == nil {
		if moved.ID != b1.ID || moved.Reference != b1.Reference || moved.Version != 2 {
			t.Errorf("UpdateBooking = %+v", moved)
		}
		got, _ := s.GetBooking(ctx, b1.ID)
		sameInstant(t, "updated StartsAt", got.StartsAt, at(9, 55))
		sameInstant(t, "updated UpdatedAt (caller's clock)", got.UpdatedAt, t0.Add(time.Hour))
		if got.Version != 2 {
			t.Errorf("version = %d", got.Version)
		}
	} else {
		t.Errorf("UpdateBooking within own span: %v", err)
	}
	// Moving onto another confirmed booking is an overlap and writes nothing.
	_, err = s.UpdateBooking(ctx, b1.ID, func(b store.Booking) (store.Booking, error) {
		b.StartsAt, b.EndsAt, b.BlockStart, b.BlockEnd = at(10, 40), at(11, 10), at(10, 40), at(11, 20)
		return b, nil
	})
	wantErr(t, err, store.ErrOverlap)
	if got, _ := s.GetBooking(ctx, b1.ID); !got.StartsAt.Equal(at(9, 55)) {
		t.Errorf("failed update moved the booking to %v", got.StartsAt)
	}
	boom := errors.New("boom")
	_, err = s.UpdateBooking(ctx, b1.ID, func(b store.Booking) (store.Booking, error) { b.Notes = "x"; return b, boom })
	wantErr(t, err, boom)
	_, err = s.UpdateBooking(ctx, "bkg_missing", func(b store.Booking) (store.Booking, error) { return b, nil })
	wantErr(t, err, store.ErrNotFound)

	// Cancelling frees the span for a new confirmed booking.
	_, err = s.UpdateBooking(ctx, b1.ID, func(b store.Booking) (store.Booking, error) {
		b.Status, b.CancelReason = store.BookingCancelled, "changed plans"
		ca := t0.Add(2 * time.Hour)
		b.CancelledAt = &ca
		return b, nil
	})
	must(t, err)
	got, _ = s.GetBooking(ctx, b1.ID)
	if got.Status != store.BookingCancelled || got.CancelledAt == nil || got.CancelReason != "changed plans" {
		t.Errorf("cancelled booking = %+v", got)
	} else {
		sameInstant(t, "CancelledAt", *got.CancelledAt, t0.Add(2*time.Hour))
	}
	b2 := newBooking(c, "ana", "cut", at(10, 0), store.BookingConfirmed)
	must(t, s.InsertBooking(ctx, b2))
	// Reinstating the cancelled one now overlaps b2.
	_, err = s.UpdateBooking(ctx, b1.ID, func(b store.Booking) (store.Booking, error) { b.Status = store.BookingConfirmed; return b, nil })
	wantErr(t, err, store.ErrOverlap)

	// ListStaffBookings: confirmed only, by blocked span, in one call.
	ana, ben := staffByRef(c, "ana").ID, staffByRef(c, "ben").ID
	list, err := s.ListStaffBookings(ctx, []string{ana, ben}, at(10, 30), at(10, 45))
	must(t, err)
	for _, b := range list {
		if b.Status != store.BookingConfirmed {
			t.Errorf("ListStaffBookings returned a %s booking", b.Status)
		}
		if !b.BlockStart.Before(at(10, 45)) || !b.BlockEnd.After(at(10, 30)) {
			t.Errorf("ListStaffBookings returned [%v, %v) outside the window", b.BlockStart, b.BlockEnd)
		}
	}
	if len(list) != 3 { // ana 10:00 (b2), ana 10:40, ben 10:00
		t.Errorf("ListStaffBookings = %d bookings, want 3: %+v", len(list), list)
	}
	for i := 1; i < len(list); i++ {
		if list[i].BlockStart.Before(list[i-1].BlockStart) {
			t.Error("ListStaffBookings not ordered by block start")
		}
	}
	list, err = s.ListStaffBookings(ctx, []string{ana}, at(8, 0), at(9, 0))
	must(t, err)
	if len(list) != 1 { // colour at 8:30 blocks from 8:25
		t.Errorf("ListStaffBookings early window = %d, want 1", len(list))
	}
	// The window end is exclusive.
	list, err = s.ListStaffBookings(ctx, []string{ana}, at(8, 0), at(8, 25))
	must(t, err)
	if len(list) != 0 {
		t.Errorf("ListStaffBookings with window ending at a block start = %d, want 0", len(list))
	}
	list, err = s.ListStaffBookings(ctx, nil, at(0, 0), at(23, 0))
	must(t, err)
	if len(list) != 0 {
		t.Errorf("ListStaffBookings(no staff) = %d", len(list))
	}

	// StaffDay: the same bookings as blocked spans, with the business's
	// version beside them, in one statement.
	day, err := s.StaffDay(ctx, c.Business.Reference, []string{ana, ben}, at(10, 30), at(10, 45))
	must(t, err)
	if !day.Found || day.BusinessID != c.Business.ID {
		t.Errorf("StaffDay business = %v %q, want %q", day.Found, day.BusinessID, c.Business.ID)
	}
	if biz, err := s.GetBusiness(ctx, c.Business.Reference); err == nil {
		sameInstant(t, "StaffDay UpdatedAt", day.UpdatedAt, biz.UpdatedAt)
	} else {
		t.Error(err)
	}
	listed, err := s.ListStaffBookings(ctx, []string{ana, ben}, at(10, 30), at(10, 45))
	must(t, err)
	if len(day.Busy) != len(listed) || len(listed) == 0 {
		t.Errorf("StaffDay = %d spans, ListStaffBookings %d", len(day.Busy), len(listed))
	}
	for i := range min(len(day.Busy), len(listed)) {
		got, w := day.Busy[i], listed[i]
		if got.BookingID != w.ID || got.StaffID != w.StaffID || !got.BlockStart.Equal(w.BlockStart) || !got.BlockEnd.Equal(w.BlockEnd) {
			t.Errorf("StaffDay span %d = %+v, want booking %+v", i, got, w)
		}
	}
	for _, tc := range []struct {
		name    string
		staff   []string
		from    time.Time
		to      time.Time
		want    int
		ref     string
		present bool
	}{
		{"free window", []string{ana}, at(8, 0), at(8, 25), 0, c.Business.Reference, true},
		{"no staff", nil, at(0, 0), at(23, 0), 0, c.Business.Reference, true},
		{"unknown business", []string{ana}, at(0, 0), at(23, 0), 0, "biz-nobody", false},
	} {
		day, err := s.StaffDay(ctx, tc.ref, tc.staff, tc.from, tc.to)
		must(t, err)
		if day.Found != tc.present || len(day.Busy) != tc.want || (tc.present && day.UpdatedAt.IsZero()) {
			t.Errorf("StaffDay %s = %+v, want found %v and %d spans", tc.name, day, tc.present, tc.want)
		}
	}

	// Booking events, oldest first.
	for v, action := range []string{"created", "rescheduled", "cancelled"} {
		must(t, s.AddBookingEvent(ctx, store.BookingEvent{BookingID: b1.ID, Version: v + 1, Action: action, StaffID: ana,
			StartsAt: at(10, 0), EndsAt: at(10, 30), At: t0.Add(time.Duration(v) * time.Minute)}))
	}
	ev, err := s.ListBookingEvents(ctx, b1.ID)
	must(t, err)
	var actions []string
	for _, e := range ev {
		actions = append(actions, e.Action)
		if e.ID == "" || e.BookingID != b1.ID || e.StaffID != ana {
			t.Errorf("event = %+v", e)
		}
	}
	if !slices.Equal(actions, []string{"created", "rescheduled", "cancelled"}) {
		t.Errorf("events = %v", actions)
	}
	if len(ev) > 0 {
		sameInstant(t, "event At", ev[0].At, t0)
	}
	if ev, _ := s.ListBookingEvents(ctx, b2.ID); len(ev) != 0 {
		t.Errorf("other booking has %d events", len(ev))
	}
}

// testBookingsConcurrent: 20 goroutines book overlapping slots of one staff
// member at once; exactly one wins, every other one gets ErrOverlap.
func testBookingsConcurrent(t *testing.T, s store.Store) {
	c := putSample(t, s)
	const n = 20
	errs := parallel(n, func(i int) error {
		return s.InsertBooking(ctx, newBooking(c, "ana", "cut", at(14, i), store.BookingConfirmed))
	})
	ok, overlap := count(errs, nil), count(errs, store.ErrOverlap)
	if ok != 1 || overlap != n-1 {
		t.Fatalf("concurrent overlapping inserts: %d confirmed, %d ErrOverlap, others %v", ok, overlap, others(errs, store.ErrOverlap))
	}
	list, err := s.ListStaffBookings(ctx, []string{staffByRef(c, "ana").ID}, at(0, 0), at(23, 0))
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("%d confirmed bookings stored, want 1", len(list))
	}
	// 20 bookings on other days, moved at once into one free slot: one move
	// wins, every other one gets ErrOverlap and stays where it was.
	var ids []string
	for i := range n {
		bk := newBooking(c, "ana", "cut", at(24*(i+2), 0), store.BookingConfirmed)
		must(t, s.InsertBooking(ctx, bk))
		ids = append(ids, bk.ID)
	}
	errs = parallel(n, func(i int) error {
		_, err := s.UpdateBooking(ctx, ids[i], func(b store.Booking) (store.Booking, error) {
			d := at(17, i).Sub(b.StartsAt)
			b.StartsAt, b.EndsAt, b.BlockStart, b.BlockEnd = b.StartsAt.Add(d), b.EndsAt.Add(d), b.BlockStart.Add(d), b.BlockEnd.Add(d)
			b.Version++
			return b, nil
		})
		return err
	})
	if ok, overlap := count(errs, nil), count(errs, store.ErrOverlap); ok != 1 || overlap != n-1 {
		t.Fatalf("concurrent overlapping moves: %d moved, %d ErrOverlap, others %v", ok, overlap, others(errs, store.ErrOverlap))
	}
	list, err = s.ListStaffBookings(ctx, []string{staffByRef(c, "ana").ID}, at(16, 0), at(19, 0))
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("%d bookings in the contested slot, want 1", len(list))
	}

	// Non-overlapping concurrent inserts all succeed.
	errs = parallel(n, func(i int) error {
		return s.InsertBooking(ctx, newBooking(c, "ben", "cut", at(24+i, 0), store.BookingConfirmed))
	})
	if ok := count(errs, nil); ok != n {
		t.Fatalf("concurrent non-overlapping inserts: %d of %d succeeded: %v", ok, n, others(errs, nil))
	}
}

func testAccountBookings(t *testing.T, s store.Store) {
	c := putSample(t, s)
	now := at(12, 0)
	mk := func(staff string, h int, status string) store.Booking {
		b := newBooking(c, staff, "cut", at(h, 0), status)
		b.AccountID = "acc_list"
		must(t, s.InsertBooking(ctx, b))
		return b
	}
	past1 := mk("ana", 9, store.BookingCompleted)
	past2 := mk("ana", 10, store.BookingConfirmed)
	canc := mk("ana", 13, store.BookingCancelled)
	up1 := mk("ana", 13, store.BookingConfirmed)
	up2 := mk("ana", 15, store.BookingConfirmed)
	up3 := mk("ben", 16, store.BookingConfirmed)
	other := newBooking(c, "ben", "cut", at(17, 0), store.BookingConfirmed) // someone else's
	must(t, s.InsertBooking(ctx, other))

	list := func(f store.BookingFilter) []string {
		t.Helper()
		f.AccountID, f.Now = "acc_list", now
		got, err := s.ListAccountBookings(ctx, f)
		must(t, err)
		return bookingIDs(got)
	}
	for _, tc := range []struct {
		name string
		f    store.BookingFilter
		want []string
	}{
		{"upcoming soonest first", store.BookingFilter{Status: "upcoming", Limit: 10}, []string{up1.ID, up2.ID, up3.ID}},
		{"upcoming page 1 (limit+1)", store.BookingFilter{Status: "upcoming", Limit: 2}, []string{up1.ID, up2.ID, up3.ID}},
		{"upcoming page 2", store.BookingFilter{Status: "upcoming", Limit: 2, Offset: 2}, []string{up3.ID}},
		{"past latest first", store.BookingFilter{Status: "past", Limit: 10}, []string{past2.ID, past1.ID}},
		{"cancelled", store.BookingFilter{Status: "cancelled", Limit: 10}, []string{canc.ID}},
		{"all", store.BookingFilter{Status: "all", Limit: 10}, nil},
		{"all page", store.BookingFilter{Status: "all", Limit: 3}, nil},
	} {
		got := list(tc.f)
		switch tc.name {
		case "all":
			if len(got) != 6 || slices.Contains(got, other.ID) {
				t.Errorf("%s = %d bookings, want 6 of this account", tc.name, len(got))
			}
		case "all page":
			if len(got) != 4 {
				t.Errorf("%s = %d bookings, want limit+1 = 4", tc.name, len(got))
			}
		default:
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}
