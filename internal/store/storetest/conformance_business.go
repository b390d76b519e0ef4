package storetest

import (
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// testPendingHolds: a pending booking holds its slot exactly as a confirmed
// one does (PostgreSQL's exclusion constraint, SQLite's check-and-insert),
// on insert and on update; a declined one frees it. respond_by round-trips,
// ListDuePending finds the due pending bookings only, ListBusinessBookings
// filters by business, staff, status and start, and a business's
// credentials are replaced and listed in order, keeping the date of an
// unchanged one (docs/reference.md "Bookings the business answers").
func testPendingHolds(t *testing.T, s store.Store) {
	c := putSample(t, s)
	// cut: 30 min + 10 min buffer after. 10:00 blocks [10:00, 10:40).
	p := newBooking(c, "ana", "cut", at(10, 0), store.BookingPending)
	rb := at(8, 0)
	p.RespondBy = &rb
	must(t, s.InsertBooking(ctx, p))
	got, err := s.GetBooking(ctx, p.ID)
	must(t, err)
	if got.Status != store.BookingPending || got.RespondBy == nil {
		t.Fatalf("pending booking read back as %+v", got)
	}
	sameInstant(t, "RespondBy", *got.RespondBy, rb)

	// Overlapping inserts are refused whether they are pending or confirmed.
	wantErr(t, s.InsertBooking(ctx, newBooking(c, "ana", "cut", at(10, 20), store.BookingConfirmed)), store.ErrOverlap)
	wantErr(t, s.InsertBooking(ctx, newBooking(c, "ana", "cut", at(10, 30), store.BookingPending)), store.ErrOverlap)
	// Another staff member is free; a declined booking holds nothing.
	must(t, s.InsertBooking(ctx, newBooking(c, "ben", "cut", at(10, 0), store.BookingPending)))
	must(t, s.InsertBooking(ctx, newBooking(c, "ana", "cut", at(10, 20), store.BookingDeclined)))
	// Moving a confirmed booking onto the pending one is refused.
	other := newBooking(c, "ana", "cut", at(12, 0), store.BookingConfirmed)
	must(t, s.InsertBooking(ctx, other))
	_, err = s.UpdateBooking(ctx, other.ID, func(b store.Booking) (store.Booking, error) {
		b.StartsAt, b.EndsAt, b.BlockStart, b.BlockEnd = at(10, 10), at(10, 40), at(10, 10), at(10, 50)
		return b, nil
	})
	wantErr(t, err, store.ErrOverlap)

	// The slot engine's reads see pending bookings as busy.
	ana := staffByRef(c, "ana").ID
	list, err := s.ListStaffBookings(ctx, []string{ana}, at(9, 0), at(11, 0))
	must(t, err)
	if len(list) != 1 || list[0].ID != p.ID {
		t.Fatalf("ListStaffBookings = %+v, want the pending booking only", bookingIDs(list))
	}
	d, err := s.StaffDay(ctx, c.Business.Reference, []string{ana}, at(9, 0), at(11, 0))
	must(t, err)
	if len(d.Busy) != 1 || d.Busy[0].BookingID != p.ID {
		t.Fatalf("StaffDay busy = %+v, want the pending booking", d.Busy)
	}

	// Due pending bookings: respond_by at or before now, pending only.
	due, err := s.ListDuePending(ctx, at(7, 59), 10)
	must(t, err)
	if len(due) != 0 {
		t.Fatalf("due before respond_by: %v", bookingIDs(due))
	}
	due, err = s.ListDuePending(ctx, at(8, 0), 10)
	must(t, err)
	if len(due) != 1 || due[0].ID != p.ID {
		t.Fatalf("due at respond_by: %v", bookingIDs(due))
	}
	// Declining frees the slot and the booking is no longer due.
	_, err = s.UpdateBooking(ctx, p.ID, func(b store.Booking) (store.Booking, error) {
		b.Status, b.RespondBy, b.Version = store.BookingDeclined, nil, b.Version+1
		return b, nil
	})
	must(t, err)
	if due, _ = s.ListDuePending(ctx, at(9, 0), 10); len(due) != 0 {
		t.Fatalf("a declined booking is still due: %v", bookingIDs(due))
	}
	must(t, s.InsertBooking(ctx, newBooking(c, "ana", "cut", at(10, 0), store.BookingConfirmed)))

	// The business's bookings.
	all, err := s.ListBusinessBookings(ctx, store.BusinessBookingFilter{BusinessID: c.Business.ID, From: at(0, 0), To: at(24, 0)})
	must(t, err)
	if len(all) != 5 {
		t.Fatalf("business bookings = %d, want 5", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].StartsAt.Before(all[i-1].StartsAt) {
			t.Fatalf("business bookings out of order: %v", bookingIDs(all))
		}
	}
	ben := staffByRef(c, "ben").ID
	only, err := s.ListBusinessBookings(ctx, store.BusinessBookingFilter{BusinessID: c.Business.ID, StaffID: ben,
		Statuses: []string{store.BookingPending}, From: at(0, 0), To: at(24, 0)})
	must(t, err)
	if len(only) != 1 || only[0].StaffID != ben || only[0].Status != store.BookingPending {
		t.Fatalf("filtered business bookings = %+v", only)
	}
	page, err := s.ListBusinessBookings(ctx, store.BusinessBookingFilter{BusinessID: c.Business.ID, From: at(0, 0), To: at(24, 0), Limit: 2})
	must(t, err)
	if len(page) != 3 { // Limit+1: there is more
		t.Fatalf("a page of 2 read %d", len(page))
	}
	if none, _ := s.ListBusinessBookings(ctx, store.BusinessBookingFilter{BusinessID: "biz_nobody", From: at(0, 0), To: at(24, 0)}); len(none) != 0 {
		t.Fatalf("another business's list: %v", bookingIDs(none))
	}

	// Credentials.
	first := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cs := []store.Credential{
		{Kind: store.CredentialLicense, Name: "Barber license", Issuer: "State board", Number: "B-1", ValidUntil: "2027-01-31", UpdatedAt: first},
		{Kind: store.CredentialInsurance, Name: "Liability insurance", UpdatedAt: first},
	}
	must(t, s.ReplaceCredentials(ctx, c.Business.ID, cs))
	back, err := s.ListCredentials(ctx, c.Business.ID)
	must(t, err)
	if len(back) != 2 || back[0].Name != "Barber license" || back[0].ValidUntil != "2027-01-31" || back[0].Number != "B-1" || back[1].ValidUntil != "" {
		t.Fatalf("credentials = %+v", back)
	}
	sameInstant(t, "credential UpdatedAt", back[0].UpdatedAt, first)
	// The same first entry again keeps its date; a changed one is new.
	must(t, s.ReplaceCredentials(ctx, c.Business.ID, []store.Credential{
		{Kind: store.CredentialLicense, Name: "Barber license", Issuer: "State board", Number: "B-1", ValidUntil: "2027-01-31"},
		{Kind: store.CredentialCertification, Name: "Hot-towel shave"},
	}))
	back, err = s.ListCredentials(ctx, c.Business.ID)
	must(t, err)
	if len(back) != 2 || back[1].Kind != store.CredentialCertification {
		t.Fatalf("replaced credentials = %+v", back)
	}
	sameInstant(t, "unchanged credential UpdatedAt", back[0].UpdatedAt, first)
	if !back[1].UpdatedAt.After(first) {
		t.Fatalf("a new credential kept an old date: %v", back[1].UpdatedAt)
	}
	must(t, s.ReplaceCredentials(ctx, c.Business.ID, nil))
	if back, _ = s.ListCredentials(ctx, c.Business.ID); len(back) != 0 {
		t.Fatalf("credentials after clearing: %+v", back)
	}
}
