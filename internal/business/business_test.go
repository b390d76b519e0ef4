package business_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

var start = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC) // a Monday

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// mailbox keeps the e-mails queued through it, in the caller's
// transaction as the outbox would.
type mailbox struct {
	mu    sync.Mutex
	mails []identity.Mail
}

func (m *mailbox) MailOff() bool { return false }
func (m *mailbox) QueueMail(_ context.Context, _ identity.MailTx, x identity.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mails = append(m.mails, x)
	return nil
}

type fixture struct {
	s            *sqlstore.Store
	svc          *business.Service
	clk          *clock
	mail         *mailbox
	owner, staff business.Membership
	cat          store.Catalog
}

func setup(t *testing.T, s *sqlstore.Store) fixture {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: start}
	mail := &mailbox{}
	svc, err := business.New(business.Config{Store: s, Clock: clk.now, Mailer: mail, Issuer: "https://auth.example"})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := s.PutCatalog(ctx, booking.DemoCatalogs(start)[0])
	if err != nil {
		t.Fatal(err)
	}
	var dana string
	for _, st := range cat.Staff {
		if st.Reference == "stf-dana-kowalski" {
			dana = st.ID
		}
	}
	for _, a := range []struct{ id, email, role, staff string }{{"acct_o", "owner@example.com", store.RoleOwner, ""}, {"acct_s", "staff@example.com", store.RoleStaff, dana},
		{"acct_n", "new@example.com", "", ""}} {
		if err := s.CreateAccount(ctx, store.Account{ID: a.id, Email: a.email, PasswordHash: "x", CreatedAt: start, UpdatedAt: start}); err != nil {
			t.Fatal(err)
		}
		if a.role != "" {
			if err := s.AddMember(ctx, store.Member{BusinessID: cat.Business.ID, AccountID: a.id, Role: a.role, StaffID: a.staff, CreatedAt: start}); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := fixture{s: s, svc: svc, clk: clk, mail: mail, cat: cat}
	if f.owner, err = svc.Open(ctx, "acct_o", cat.Business.Reference); err != nil {
		t.Fatal(err)
	}
	if f.staff, err = svc.Open(ctx, "acct_s", cat.Business.Reference); err != nil {
		t.Fatal(err)
	}
	return f
}

func auditCount(t *testing.T, s store.Store) int {
	evs, err := s.ListAuditEvents(context.Background(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// TestStaffReachTheirOwnOnly: staff get ErrNotFound for the owners'
// changes and for another staff member's time off; refused input and
// refusals write nothing.
func TestStaffReachTheirOwnOnly(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		if _, err := f.svc.Open(ctx, "acct_n", f.cat.Business.Reference); !errors.Is(err, business.ErrNotFound) {
			t.Fatalf("a non-member opens the business: %v", err)
		}
		marcus := f.cat.Staff[0].ID
		before := auditCount(t, s)
		for name, err := range map[string]error{
			"hours":    f.svc.SetHours(ctx, f.staff, nil, true),
			"service":  f.svc.UpdateService(ctx, f.staff, "svc-beard-trim", business.ServiceEdit{DurationMinutes: 20}),
			"policies": f.svc.SetPolicies(ctx, f.staff, business.Policies{HorizonDays: 30}),
			"invite":   f.svc.InviteStaff(ctx, f.staff, "x@example.com", f.staff.StaffID),
			"remove":   f.svc.RemoveStaffMember(ctx, f.staff, "acct_o"),
		} {
			if !errors.Is(err, business.ErrNotFound) {
				t.Errorf("staff %s: %v, want ErrNotFound", name, err)
			}
		}
		if _, err := f.svc.Members(ctx, f.staff); !errors.Is(err, business.ErrNotFound) {
			t.Errorf("staff lists members: %v", err)
		}
		if _, err := f.svc.AddTimeOff(ctx, f.staff, marcus, start.Add(48*time.Hour), start.Add(50*time.Hour), ""); !errors.Is(err, business.ErrNotFound) {
			t.Errorf("staff blocks Marcus's time: %v", err)
		}
		if _, _, err := f.svc.Bookings(ctx, f.staff, business.Filter{From: start, To: start, StaffID: marcus}); !errors.Is(err, business.ErrNotFound) {
			t.Errorf("staff lists Marcus's bookings: %v", err)
		}
		// Refused input, field by field.
		_, err := f.svc.AddTimeOff(ctx, f.staff, f.staff.StaffID, start.Add(50*time.Hour), start.Add(48*time.Hour), "")
		if e, ok := problem.As(err); !ok || len(e.Problems) != 1 || e.Problems[0].Path != "to" {
			t.Errorf("end before start: %v", err)
		}
		err = f.svc.UpdateService(ctx, f.owner, "svc-beard-trim", business.ServiceEdit{DurationMinutes: 0, PriceCents: -1})
		if e, ok := problem.As(err); !ok || len(e.Problems) != 2 {
			t.Errorf("bad service: %v", err)
		}
		if n := auditCount(t, s); n != before {
			t.Fatalf("refusals wrote %d audit events", n-before)
		}
		// Staff may block their own time.
		if _, err := f.svc.AddTimeOff(ctx, f.staff, f.staff.StaffID, start.Add(48*time.Hour), start.Add(50*time.Hour), "Doctor"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestOrphaningHoursAsk: hours that leave an upcoming booking outside
// name it and change nothing; confirmed, they change and the booking stays.
func TestOrphaningHoursAsk(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		ny, _ := time.LoadLocation("America/New_York")
		sv := f.cat.Services[0]
		at := time.Date(2026, 12, 2, 17, 0, 0, 0, ny) // Wednesday 17:00
		b := store.Booking{ID: "bkg_1", Reference: "LS-ORPHAN1", BusinessID: f.cat.Business.ID, ServiceID: sv.ID, StaffID: f.staff.StaffID,
			AccountID: "acct_n", StartsAt: at, EndsAt: at.Add(30 * time.Minute), BlockStart: at, BlockEnd: at.Add(30 * time.Minute),
			Status: store.BookingConfirmed, Version: 1, Currency: "USD", CreatedAt: start, UpdatedAt: start}
		if err := s.InsertBooking(ctx, b); err != nil {
			t.Fatal(err)
		}
		hours := []store.HoursWindow{{Weekday: time.Wednesday, StartMin: 9 * 60, EndMin: 12 * 60}}
		err := f.svc.SetHours(ctx, f.owner, hours, false)
		e, ok := problem.As(err)
		if !ok || e.Code != business.ErrOrphans.Code || len(e.Problems) != 1 || e.Problems[0].Path != "LS-ORPHAN1" {
			t.Fatalf("orphaning hours: %v", err)
		}
		if c, _ := s.LoadCatalogByID(ctx, f.cat.Business.ID); len(c.OpeningHours) == 1 {
			t.Fatal("the refused hours were saved")
		}
		if err := f.svc.SetHours(ctx, f.owner, hours, true); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.LoadCatalogByID(ctx, f.cat.Business.ID); len(c.OpeningHours) != 1 {
			t.Fatalf("hours = %v", c.OpeningHours)
		}
		if got, _ := s.GetBookingByReference(ctx, "LS-ORPHAN1"); got.Status != store.BookingConfirmed {
			t.Fatalf("the booking was touched: %+v", got)
		}
	})
}

// TestInvitationExpires: an invitation works once and not after 7 days
// (the clock injected); its e-mail carries the link, the store only its
// hash.
func TestInvitationExpires(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		marcus := f.cat.Staff[0].ID
		for range 2 {
			if err := f.svc.InviteStaff(ctx, f.owner, "New@Example.com", marcus); err != nil {
				t.Fatal(err)
			}
		}
		if len(f.mail.mails) != 2 || f.mail.mails[0].To != "new@example.com" || f.mail.mails[0].Topic != business.TopicInvitation {
			t.Fatalf("mails = %+v", f.mail.mails)
		}
		token := func(i int) string {
			m := f.mail.mails[i].Text
			const p = "/business/join?token="
			j := strings.Index(m, p) + len(p)
			k := j
			for k < len(m) && m[k] != '\n' {
				k++
			}
			return m[j:k]
		}
		if _, err := s.GetMemberInvitation(ctx, token(0)); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("the token itself is stored")
		}
		f.clk.add(business.InvitationLifetime + time.Second)
		if _, err := f.svc.AcceptInvitation(ctx, "acct_n", token(0)); !errors.Is(err, business.ErrInvitation) {
			t.Fatalf("an expired invitation: %v", err)
		}
		f.clk.t = start.Add(time.Hour)
		m, err := f.svc.AcceptInvitation(ctx, "acct_n", token(1))
		if err != nil || m.StaffID != marcus || m.Role != store.RoleStaff {
			t.Fatalf("accept: %+v %v", m, err)
		}
		if _, err := f.svc.AcceptInvitation(ctx, "acct_n", token(1)); !errors.Is(err, business.ErrInvitation) {
			t.Fatalf("a used invitation: %v", err)
		}
		if _, err := f.svc.AcceptInvitation(ctx, "acct_n", "not-a-token"); !errors.Is(err, business.ErrInvitation) {
			t.Fatalf("an unknown token: %v", err)
		}
	})
}
