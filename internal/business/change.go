package business

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// The console's changes. Each is owner-only unless it says otherwise;
// a staff member asking for one gets ErrNotFound, as for a page that does
// not exist (docs/reference.md §16).

func marshal(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

func ownerOnly(m Membership) error {
	if !m.IsOwner() {
		return ErrNotFound
	}
	return nil
}

// MaxReasonLen bounds a time off's reason.
const MaxReasonLen = 200

// AddTimeOff blocks [from, to) of a staff member: staff for themselves,
// owners for anyone of their business. The next availability answer on
// every replica leaves the span out.
func (s *Service) AddTimeOff(ctx context.Context, m Membership, staffID string, from, to time.Time, reason string) (store.TimeOff, error) {
	if !m.IsOwner() && staffID != m.StaffID {
		return store.TimeOff{}, ErrNotFound
	}
	var ps []problem.Problem
	if from.IsZero() {
		ps = append(ps, problem.Problem{Path: "from", Message: "Give the start of the time off."})
	}
	if to.IsZero() {
		ps = append(ps, problem.Problem{Path: "to", Message: "Give the end of the time off."})
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		ps = append(ps, problem.Problem{Path: "to", Message: "The end must come after the start."})
	}
	if !to.IsZero() && to.Sub(from) > 366*24*time.Hour {
		ps = append(ps, problem.Problem{Path: "to", Message: "Block at most a year at a time."})
	}
	reason = strings.TrimSpace(reason)
	if len([]rune(reason)) > MaxReasonLen {
		ps = append(ps, problem.Problem{Path: "reason", Message: fmt.Sprintf("Use at most %d characters.", MaxReasonLen)})
	}
	if len(ps) > 0 {
		return store.TimeOff{}, invalid(ps...)
	}
	var out store.TimeOff
	err := s.inTx(ctx, func(tx Tx) error {
		var err error
		out, err = tx.AddTimeOff(ctx, m.BusinessID, store.TimeOff{StaffID: staffID, StartsAt: from, EndsAt: to, Reason: reason})
		if err != nil {
			return notFound(err)
		}
		return s.audit(ctx, tx, m, "business.time_off.add", m.Business.Reference+"/"+staffID, nil,
			map[string]any{"id": out.ID, "staff_id": staffID, "starts_at": out.StartsAt, "ends_at": out.EndsAt, "reason": reason})
	})
	return out, err
}

// RemoveTimeOff removes a time off: staff their own, owners any of their
// business. Once the removal has committed, the freed span is offered to
// the people waiting (Config.Freed) in a transaction of its own: the
// booking engine reads the catalog without the time off only once the
// removal has moved the business row's UpdatedAt for everyone
// (docs/design.md "The waitlist"). An offer that fails is logged; the
// removal stands.
func (s *Service) RemoveTimeOff(ctx context.Context, m Membership, id string) error {
	c, err := s.Catalog(ctx, m)
	if err != nil {
		return err
	}
	var found *store.TimeOff
	for _, offs := range c.StaffTimeOff {
		for i := range offs {
			if offs[i].ID == id {
				found = &offs[i]
			}
		}
	}
	if found == nil {
		return ErrNotFound
	}
	err = s.inTx(ctx, func(tx Tx) error {
		if err := tx.DeleteTimeOff(ctx, m.BusinessID, id); err != nil {
			return notFound(err)
		}
		return s.audit(ctx, tx, m, "business.time_off.remove", m.Business.Reference+"/"+found.StaffID,
			map[string]any{"id": id, "staff_id": found.StaffID, "starts_at": found.StartsAt, "ends_at": found.EndsAt}, nil)
	})
	if err != nil || s.freed == nil {
		return err
	}
	if err := s.freed(ctx, m.BusinessID, found.StaffID, found.StartsAt, found.EndsAt); err != nil {
		s.log.WarnContext(ctx, "business: offering removed time off to the waitlist", "business", m.Business.Reference,
			"staff", found.StaffID, "err", err)
	}
	return nil
}

// outside lists the upcoming bookings (pending or confirmed) of c that the
// opening hours hours would not cover, as problems naming each.
func (s *Service) outside(ctx context.Context, tx Tx, c store.Catalog, hours []store.HoursWindow) ([]problem.Problem, error) {
	now := s.now()
	bs, err := tx.ListBusinessBookings(ctx, store.BusinessBookingFilter{BusinessID: c.Business.ID, Statuses: store.HoldingStatuses,
		From: now, To: now.AddDate(10, 0, 0), Limit: 10000})
	if err != nil {
		return nil, err
	}
	loc := Location(c.Business)
	var ps []problem.Problem
	for _, b := range bs {
		st, en := b.StartsAt.In(loc), b.EndsAt.In(loc)
		a := st.Hour()*60 + st.Minute()
		e := a + int(en.Sub(st)/time.Minute)
		covered := false
		for _, w := range hours {
			if w.Weekday == st.Weekday() && w.StartMin <= a && e <= w.EndMin {
				covered = true
			}
		}
		if !covered {
			r := row(c, loc, b)
			ps = append(ps, problem.Problem{Path: b.Reference, Message: fmt.Sprintf("%s, %s–%s: %s with %s",
				st.Format("Mon 2 Jan 2006"), st.Format("15:04"), en.Format("15:04"), r.ServiceName, r.StaffName)})
		}
	}
	return ps, nil
}

// SetHours replaces the business's opening hours. Hours that would leave
// upcoming bookings outside them answer ErrOrphans listing each booking
// and change nothing, unless confirmed: the bookings then stay as they
// are (nobody's appointment is moved or cancelled by an edit of hours).
func (s *Service) SetHours(ctx context.Context, m Membership, hours []store.HoursWindow, confirmed bool) error {
	if err := ownerOnly(m); err != nil {
		return err
	}
	var ps []problem.Problem
	for i, w := range hours {
		if w.StartMin < 0 || w.EndMin > 1440 || w.StartMin >= w.EndMin {
			ps = append(ps, problem.Problem{Path: fmt.Sprintf("hours[%d]", i),
				Message: fmt.Sprintf("On %s the closing time must come after the opening time.", w.Weekday)})
		}
	}
	if len(ps) > 0 {
		return invalid(ps...)
	}
	return s.inTx(ctx, func(tx Tx) error {
		c, err := tx.LoadCatalogByID(ctx, m.BusinessID)
		if err != nil {
			return err
		}
		if !confirmed {
			orphans, err := s.outside(ctx, tx, c, hours)
			if err != nil {
				return err
			}
			if len(orphans) > 0 {
				return problem.Invalid(ErrOrphans.Code, ErrOrphans.Message, orphans...)
			}
		}
		before := c.OpeningHours
		c.OpeningHours = hours
		if _, err := tx.PutCatalog(ctx, c); err != nil {
			return err
		}
		return s.audit(ctx, tx, m, "business.hours", m.Business.Reference, before, hours)
	})
}

// ServiceEdit is what the console changes of a service.
type ServiceEdit struct {
	DurationMinutes     int
	PriceCents          int64
	BufferBeforeMinutes int
	BufferAfterMinutes  int
	// RequiresConfirmation: its bookings wait for the business's answer
	// (pending) instead of being confirmed at once.
	RequiresConfirmation bool
}

// UpdateService changes a service of the owner's business. Booked
// appointments keep the times they were booked with; the new duration and
// buffers apply to the next booking.
func (s *Service) UpdateService(ctx context.Context, m Membership, serviceRef string, e ServiceEdit) error {
	if err := ownerOnly(m); err != nil {
		return err
	}
	var ps []problem.Problem
	if e.DurationMinutes < 1 || e.DurationMinutes > 24*60 {
		ps = append(ps, problem.Problem{Path: "duration_minutes", Message: "Give a duration from 1 to 1440 minutes."})
	}
	if e.PriceCents < 0 || e.PriceCents > 1e12 {
		ps = append(ps, problem.Problem{Path: "price", Message: "Give a price of zero or more."})
	}
	if e.BufferBeforeMinutes < 0 || e.BufferBeforeMinutes > 24*60 {
		ps = append(ps, problem.Problem{Path: "buffer_before_minutes", Message: "Give from 0 to 1440 minutes."})
	}
	if e.BufferAfterMinutes < 0 || e.BufferAfterMinutes > 24*60 {
		ps = append(ps, problem.Problem{Path: "buffer_after_minutes", Message: "Give from 0 to 1440 minutes."})
	}
	if len(ps) > 0 {
		return invalid(ps...)
	}
	return s.inTx(ctx, func(tx Tx) error {
		c, err := tx.LoadCatalogByID(ctx, m.BusinessID)
		if err != nil {
			return err
		}
		i := -1
		for j, sv := range c.Services {
			if sv.Reference == serviceRef {
				i = j
			}
		}
		if i < 0 {
			return ErrNotFound
		}
		before := c.Services[i]
		sv := before
		sv.DurationMinutes, sv.PriceCents, sv.BufferBeforeMinutes, sv.BufferAfterMinutes, sv.RequiresConfirmation =
			e.DurationMinutes, e.PriceCents, e.BufferBeforeMinutes, e.BufferAfterMinutes, e.RequiresConfirmation
		c.Services[i] = sv
		if _, err := tx.PutCatalog(ctx, c); err != nil {
			return err
		}
		return s.audit(ctx, tx, m, "business.service", m.Business.Reference+"/"+serviceRef, before, sv)
	})
}

// Policies are the booking rules of a business the console edits.
type Policies struct {
	MinNoticeMinutes          int
	HorizonDays               int
	CancellationWindowMinutes int
	CancellationFeeCents      int64
	AgentBooking              bool
}

// SetPolicies changes the business's booking rules (docs/reference.md §7).
func (s *Service) SetPolicies(ctx context.Context, m Membership, p Policies) error {
	if err := ownerOnly(m); err != nil {
		return err
	}
	var ps []problem.Problem
	if p.MinNoticeMinutes < 0 || p.MinNoticeMinutes > 366*24*60 {
		ps = append(ps, problem.Problem{Path: "min_notice_minutes", Message: "Give from 0 to 527040 minutes."})
	}
	if p.HorizonDays < 1 || p.HorizonDays > 3660 {
		ps = append(ps, problem.Problem{Path: "horizon_days", Message: "Give from 1 to 3660 days."})
	}
	if p.CancellationWindowMinutes < 0 || p.CancellationWindowMinutes > 366*24*60 {
		ps = append(ps, problem.Problem{Path: "cancellation_window_minutes", Message: "Give from 0 to 527040 minutes."})
	}
	if p.CancellationFeeCents < 0 || p.CancellationFeeCents > 1e12 {
		ps = append(ps, problem.Problem{Path: "cancellation_fee", Message: "Give a fee of zero or more."})
	}
	if len(ps) > 0 {
		return invalid(ps...)
	}
	return s.inTx(ctx, func(tx Tx) error {
		c, err := tx.LoadCatalogByID(ctx, m.BusinessID)
		if err != nil {
			return err
		}
		b := c.Business
		before := Policies{b.MinNoticeMinutes, b.HorizonDays, b.CancellationWindowMinutes, b.CancellationFeeCents, b.AgentBooking}
		c.Business.MinNoticeMinutes, c.Business.HorizonDays = p.MinNoticeMinutes, p.HorizonDays
		c.Business.CancellationWindowMinutes, c.Business.CancellationFeeCents = p.CancellationWindowMinutes, p.CancellationFeeCents
		c.Business.AgentBooking = p.AgentBooking
		if _, err := tx.PutCatalog(ctx, c); err != nil {
			return err
		}
		return s.audit(ctx, tx, m, "business.policies", m.Business.Reference, before, p)
	})
}

// InviteStaff e-mails an invitation to join the owner's business as the
// staff member staffID. The token is stored hashed and works once, for
// InvitationLifetime, for whichever account accepts it while signed in.
func (s *Service) InviteStaff(ctx context.Context, m Membership, email, staffID string) error {
	if err := ownerOnly(m); err != nil {
		return err
	}
	c, err := s.store.LoadCatalogByID(ctx, m.BusinessID)
	if err != nil {
		return err
	}
	st := staffByID(c, staffID)
	if st == nil {
		return ErrNotFound
	}
	addr, err := identity.NormalizeEmail(email)
	if err != nil {
		return invalid(problem.Problem{Path: "email", Message: "Give the e-mail address to send the invitation to."})
	}
	if s.mailer == nil {
		return identity.ErrMailUnavailable
	}
	tok := store.RandomString(32)
	now := s.now()
	return s.inTx(ctx, func(tx Tx) error {
		if err := tx.CreateMemberInvitation(ctx, store.MemberInvitation{TokenHash: store.HashSecret(tok), BusinessID: m.BusinessID,
			StaffID: staffID, Email: addr, InvitedBy: m.AccountID, CreatedAt: now, ExpiresAt: now.Add(InvitationLifetime)}); err != nil {
			return err
		}
		if err := s.mailer.QueueMail(ctx, tx, identity.Mail{To: addr, Topic: TopicInvitation,
			Subject: "Join " + m.Business.Name + " on Linkslot",
			Text: "Hello,\n\nyou are invited to see and manage " + st.Name + "'s calendar at " + m.Business.Name +
				" in Linkslot's business console. Sign in (or create an account), then open this link:\n\n" +
				s.issuer + "/business/join?token=" + url.QueryEscape(tok) +
				"\n\nThe link works once, for 7 days. If you did not expect this e-mail, ignore it.\n"}); err != nil {
			return err
		}
		// The audit log names the address and staff member, never the token.
		return s.audit(ctx, tx, m, "business.member.invite", m.Business.Reference+"/"+st.Reference, nil,
			map[string]any{"email": addr, "staff_id": staffID})
	})
}

// AcceptInvitation makes the signed-in account a staff member of the
// invitation's business. Any signed-in account may accept (the invitation
// went to the address the owner chose; the invitee may use another
// account of theirs); the link works once and expires.
func (s *Service) AcceptInvitation(ctx context.Context, accountID, token string) (store.Member, error) {
	hash := store.HashSecret(token)
	now := s.now()
	var out store.Member
	err := s.inTx(ctx, func(tx Tx) error {
		inv, err := tx.GetMemberInvitation(ctx, hash)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return ErrInvitation
			}
			return err
		}
		if inv.UsedAt != nil || !now.Before(inv.ExpiresAt) {
			return ErrInvitation
		}
		if _, err := tx.GetMember(ctx, inv.BusinessID, accountID); err == nil {
			return ErrAlreadyMember
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := tx.UseMemberInvitation(ctx, hash, now); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return ErrInvitation
			}
			return err
		}
		out = store.Member{BusinessID: inv.BusinessID, AccountID: accountID, Role: store.RoleStaff, StaffID: inv.StaffID, CreatedAt: now}
		if err := tx.AddMember(ctx, out); err != nil {
			return err
		}
		return s.audit(ctx, tx, Membership{Member: out}, "business.member.join", inv.BusinessID+"/"+inv.StaffID, nil,
			map[string]any{"account_id": accountID, "role": store.RoleStaff, "staff_id": inv.StaffID, "invited_by": inv.InvitedBy})
	})
	return out, err
}

// RemoveStaffMember removes a staff member's membership (owners only; an
// owner is removed by an administrator).
func (s *Service) RemoveStaffMember(ctx context.Context, m Membership, accountID string) error {
	if err := ownerOnly(m); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx Tx) error {
		old, err := tx.GetMember(ctx, m.BusinessID, accountID)
		if err != nil {
			return notFound(err)
		}
		if old.Role != store.RoleStaff {
			return ErrNotFound
		}
		if err := tx.RemoveMember(ctx, m.BusinessID, accountID); err != nil {
			return notFound(err)
		}
		return s.audit(ctx, tx, m, "business.member.remove", m.Business.Reference+"/"+old.Email,
			map[string]any{"account_id": accountID, "role": old.Role, "staff_id": old.StaffID}, nil)
	})
}
