package businessui

import (
	"context"
	"errors"

	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// MutationActions are Actions through mutation.Service.Business, the
// business channel: the person is notified, and Activity names who acted
// (the staff member at the business, or the business for its owner).
type MutationActions struct{ Mutations *mutation.Service }

var _ Actions = MutationActions{}

// Act implements Actions. The mutation service's booking_not_found (a
// booking out of the member's reach) is the console's 404.
func (a MutationActions) Act(ctx context.Context, m business.Membership, act Action) error {
	mm := mutation.Member{AccountID: m.AccountID, BusinessID: m.BusinessID, Role: m.Role, Name: m.Business.Name}
	if m.Role == store.RoleStaff {
		mm.StaffID = m.StaffID
	}
	if m.Role == store.RoleStaff && m.StaffName != "" {
		mm.Name = m.StaffName + " at " + m.Business.Name
	}
	_, err := a.Mutations.Business(ctx, mm, mutation.BusinessRequest{BookingRef: act.BookingRef, Action: mutation.BusinessAction(act.Action),
		Reason: act.Reason, Version: act.Version, IdempotencyKey: act.IdempotencyKey})
	if errors.Is(err, problem.New(problem.CodeBookingNotFound, "")) {
		return business.ErrNotFound.Wrap(err)
	}
	return err
}
