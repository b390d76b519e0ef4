package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// testMembers: memberships of owners and staff, their listings with
// addresses, removal, the cascade with a removed staff record, and the
// single use of an invitation under concurrency.
func testMembers(t *testing.T, s store.Store) {
	c := putSample(t, s)
	other, err := s.PutCatalog(ctx, sampleCatalog("other", "Other Place", "Porto", true))
	must(t, err)
	owner := newAccount(t, s, "owner@example.com")
	staff := newAccount(t, s, "staff@example.com")
	ana := staffByRef(c, "ana").ID

	must(t, s.AddMember(ctx, store.Member{BusinessID: c.Business.ID, AccountID: owner.ID, Role: store.RoleOwner, CreatedAt: t0}))
	must(t, s.AddMember(ctx, store.Member{BusinessID: c.Business.ID, AccountID: staff.ID, Role: store.RoleStaff, StaffID: ana, CreatedAt: t0}))
	must(t, s.AddMember(ctx, store.Member{BusinessID: other.Business.ID, AccountID: owner.ID, Role: store.RoleOwner, CreatedAt: t0}))
	wantErr(t, s.AddMember(ctx, store.Member{BusinessID: c.Business.ID, AccountID: owner.ID, Role: store.RoleOwner, CreatedAt: t0}), store.ErrAlreadyExists)

	m, err := s.GetMember(ctx, c.Business.ID, staff.ID)
	must(t, err)
	if m.Role != store.RoleStaff || m.StaffID != ana || m.Email != "staff@example.com" || !m.CreatedAt.Equal(store.UTC(t0)) {
		t.Fatalf("GetMember = %+v", m)
	}
	_, err = s.GetMember(ctx, other.Business.ID, staff.ID)
	wantErr(t, err, store.ErrNotFound)

	list, err := s.ListBusinessMembers(ctx, c.Business.ID)
	must(t, err)
	if len(list) != 2 || list[0].Role != store.RoleOwner || list[0].Email != "owner@example.com" || list[1].StaffID != ana {
		t.Fatalf("ListBusinessMembers = %+v", list)
	}
	mine, err := s.ListAccountMembers(ctx, owner.ID)
	must(t, err)
	if len(mine) != 2 {
		t.Fatalf("ListAccountMembers(owner) = %+v", mine)
	}

	wantErr(t, s.RemoveMember(ctx, other.Business.ID, staff.ID), store.ErrNotFound)
	must(t, s.RemoveMember(ctx, other.Business.ID, owner.ID))
	if mine, _ = s.ListAccountMembers(ctx, owner.ID); len(mine) != 1 {
		t.Fatalf("after removal: %+v", mine)
	}

	// A staff record the catalog drops takes its membership with it.
	cut := sampleCatalog("studio", "Hair Studio", "Lisbon", true)
	cut.Staff = cut.Staff[1:]
	delete(cut.StaffHours, "ana")
	_, err = s.PutCatalog(ctx, cut)
	must(t, err)
	_, err = s.GetMember(ctx, c.Business.ID, staff.ID)
	wantErr(t, err, store.ErrNotFound)

	// Invitations work once, even raced.
	ben := staffByRef(c, "ben").ID
	inv := store.MemberInvitation{TokenHash: "h1", BusinessID: c.Business.ID, StaffID: ben, Email: "new@example.com",
		InvitedBy: owner.ID, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	must(t, s.CreateMemberInvitation(ctx, inv))
	wantErr(t, s.CreateMemberInvitation(ctx, inv), store.ErrAlreadyExists)
	got, err := s.GetMemberInvitation(ctx, "h1")
	must(t, err)
	if got.StaffID != ben || got.Email != "new@example.com" || got.UsedAt != nil || !got.ExpiresAt.Equal(store.UTC(t0.Add(time.Hour))) {
		t.Fatalf("GetMemberInvitation = %+v", got)
	}
	wantErr(t, s.UseMemberInvitation(ctx, "nope", t0), store.ErrNotFound)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.UseMemberInvitation(ctx, "h1", t0) }()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			wantErr(t, err, store.ErrConflict)
		}
	}
	if ok != 1 {
		t.Fatalf("%d acceptances of one invitation succeeded, want 1", ok)
	}
	if got, _ = s.GetMemberInvitation(ctx, "h1"); got.UsedAt == nil {
		t.Fatal("used invitation has no used_at")
	}

	// The janitor's sweep: expired invitations go, used or not; live ones
	// stay.
	live := inv
	live.TokenHash, live.ExpiresAt = "h-live", t0.Add(7*24*time.Hour)
	must(t, s.CreateMemberInvitation(ctx, live))
	old := inv
	old.TokenHash = "h-old"
	must(t, s.CreateMemberInvitation(ctx, old))
	sw := sweeps(t, s)
	sweepBatches(t, "SweepMemberInvitations", 2, func(limit int) (int64, error) {
		return sw.SweepMemberInvitations(ctx, t0.Add(2*time.Hour), limit)
	})
	for _, h := range []string{"h1", "h-old"} {
		if _, err := s.GetMemberInvitation(ctx, h); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired invitation %s survived the sweep: %v", h, err)
		}
	}
	if _, err := s.GetMemberInvitation(ctx, "h-live"); err != nil {
		t.Errorf("the sweep removed a live invitation: %v", err)
	}
}

// testConsole: a business's bookings by filter as the console reads them,
// and time off that moves the business's version (the catalog cache key)
// and stays inside its business.
func testConsole(t *testing.T, s store.Store) {
	c := putSample(t, s)
	other, err := s.PutCatalog(ctx, sampleCatalog("other", "Other Place", "Porto", true))
	must(t, err)
	b1 := newBooking(c, "ana", "cut", at(9, 0), store.BookingConfirmed)
	b2 := newBooking(c, "ben", "cut", at(11, 0), store.BookingCancelled)
	b3 := newBooking(c, "ana", "cut", at(34, 0), store.BookingConfirmed)
	b4 := newBooking(other, "ana", "cut", at(9, 0), store.BookingConfirmed)
	for _, b := range []store.Booking{b3, b1, b2, b4} {
		must(t, s.InsertBooking(ctx, b))
	}
	refs := func(f store.BusinessBookingFilter) []string {
		t.Helper()
		bs, err := s.ListBusinessBookings(ctx, f)
		must(t, err)
		var out []string
		for _, b := range bs {
			out = append(out, b.Reference)
		}
		return out
	}
	day := store.BusinessBookingFilter{BusinessID: c.Business.ID, From: at(0, 0), To: at(24, 0)}
	if got := refs(day); len(got) != 2 || got[0] != b1.Reference || got[1] != b2.Reference {
		t.Fatalf("day = %v", got)
	}
	week := day
	week.To = at(24*7, 0)
	week.StaffID = staffByRef(c, "ana").ID
	if got := refs(week); len(got) != 2 || got[0] != b1.Reference || got[1] != b3.Reference {
		t.Fatalf("ana's week = %v", got)
	}
	week.StaffID, week.Statuses = "", []string{store.BookingCancelled}
	if got := refs(week); len(got) != 1 || got[0] != b2.Reference {
		t.Fatalf("cancelled = %v", got)
	}

	before, err := s.GetBusiness(ctx, "studio")
	must(t, err)
	time.Sleep(2 * time.Millisecond)
	ana := staffByRef(c, "ana").ID
	off, err := s.AddTimeOff(ctx, c.Business.ID, store.TimeOff{StaffID: ana, StartsAt: at(13, 0), EndsAt: at(15, 0), Reason: "dentist"})
	must(t, err)
	after, err := s.GetBusiness(ctx, "studio")
	must(t, err)
	if !after.UpdatedAt.After(before.UpdatedAt) {
		t.Fatalf("time off did not move the business's version: %v then %v", before.UpdatedAt, after.UpdatedAt)
	}
	cat, err := s.LoadCatalogByID(ctx, c.Business.ID)
	must(t, err)
	if o := cat.StaffTimeOff[ana]; len(o) != 1 || o[0].ID != off.ID || !o[0].StartsAt.Equal(at(13, 0).UTC()) || o[0].Reason != "dentist" {
		t.Fatalf("time off = %+v", cat.StaffTimeOff[ana])
	}
	// Another business's staff member, or its time off: not found.
	_, err = s.AddTimeOff(ctx, other.Business.ID, store.TimeOff{StaffID: ana, StartsAt: at(13, 0), EndsAt: at(15, 0)})
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, s.DeleteTimeOff(ctx, other.Business.ID, off.ID), store.ErrNotFound)

	time.Sleep(2 * time.Millisecond)
	must(t, s.DeleteTimeOff(ctx, c.Business.ID, off.ID))
	again, err := s.GetBusiness(ctx, "studio")
	must(t, err)
	if !again.UpdatedAt.After(after.UpdatedAt) {
		t.Fatal("removing time off did not move the business's version")
	}
	wantErr(t, s.DeleteTimeOff(ctx, c.Business.ID, off.ID), store.ErrNotFound)
}
