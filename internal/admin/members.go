package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/store"
)

// Members of businesses (docs/reference.md §16): administrators add and
// remove owners (and, naming the staff record, staff members).

// MemberInfo is a member as administrators see it.
type MemberInfo struct {
	Business string    `json:"business"`
	Email    string    `json:"email"`
	Role     string    `json:"role"`
	Staff    string    `json:"staff,omitempty"` // the staff record's reference
	Since    time.Time `json:"since"`
}

func memberInfo(c store.Catalog, m store.Member) MemberInfo {
	out := MemberInfo{Business: c.Business.Reference, Email: m.Email, Role: m.Role, Since: m.CreatedAt}
	for _, st := range c.Staff {
		if st.ID == m.StaffID {
			out.Staff = st.Reference
		}
	}
	return out
}

// ListMembers returns the members of a business, owners first.
func (s *Service) ListMembers(ctx context.Context, businessRef string) ([]MemberInfo, error) {
	b, err := s.store.GetBusiness(ctx, businessRef)
	if err != nil {
		return nil, translate(err, fmt.Sprintf("no business with reference %q", businessRef))
	}
	c, err := s.store.LoadCatalogByID(ctx, b.ID)
	if err != nil {
		return nil, err
	}
	ms, err := s.store.ListBusinessMembers(ctx, b.ID)
	if err != nil {
		return nil, err
	}
	out := make([]MemberInfo, len(ms))
	for i, m := range ms {
		out[i] = memberInfo(c, m)
	}
	return out, nil
}

// AddMember makes the account with email a member of the business: its
// owner when staffRef is empty, otherwise the staff member with that
// reference. The account must exist.
func (s *Service) AddMember(ctx context.Context, a Actor, businessRef, email, staffRef string) (MemberInfo, error) {
	addr, err := identity.NormalizeEmail(email)
	if err != nil {
		return MemberInfo{}, invalid("email", fmt.Sprintf("%q is not an e-mail address", email))
	}
	var out MemberInfo
	err = s.inTx(ctx, func(tx Tx) error {
		b, err := tx.GetBusiness(ctx, businessRef)
		if err != nil {
			return translate(err, fmt.Sprintf("no business with reference %q", businessRef))
		}
		acct, err := tx.GetAccountByEmail(ctx, addr)
		if err != nil || acct.DeletedAt != nil {
			if err == nil || errors.Is(err, store.ErrNotFound) {
				return ErrNotFound.WithMessage("no account with e-mail %q (the person signs up first)", addr).WithField("email")
			}
			return err
		}
		c, err := tx.LoadCatalog(ctx, businessRef)
		if err != nil {
			return err
		}
		m := store.Member{BusinessID: b.ID, AccountID: acct.ID, Role: store.RoleOwner, CreatedAt: s.now(), Email: addr}
		if staffRef != "" {
			m.Role = store.RoleStaff
			for _, st := range c.Staff {
				if st.Reference == staffRef {
					m.StaffID = st.ID
				}
			}
			if m.StaffID == "" {
				return ErrNotFound.WithMessage("business %q has no staff member %q", businessRef, staffRef).WithField("staff")
			}
		}
		if err := tx.AddMember(ctx, m); err != nil {
			return translate(err, fmt.Sprintf("%s is a member of %q already", addr, businessRef))
		}
		out = memberInfo(c, m)
		return s.audit(ctx, tx, a, "business.member.add", businessRef+"/"+addr, nil, out)
	})
	return out, err
}

// RemoveMember removes the account with email from the business.
func (s *Service) RemoveMember(ctx context.Context, a Actor, businessRef, email string) error {
	addr, err := identity.NormalizeEmail(email)
	if err != nil {
		return invalid("email", fmt.Sprintf("%q is not an e-mail address", email))
	}
	return s.inTx(ctx, func(tx Tx) error {
		b, err := tx.GetBusiness(ctx, businessRef)
		if err != nil {
			return translate(err, fmt.Sprintf("no business with reference %q", businessRef))
		}
		none := fmt.Sprintf("%s is not a member of %q", addr, businessRef)
		acct, err := tx.GetAccountByEmail(ctx, addr)
		if err != nil {
			return translate(err, none)
		}
		old, err := tx.GetMember(ctx, b.ID, acct.ID)
		if err != nil {
			return translate(err, none)
		}
		if err := tx.RemoveMember(ctx, b.ID, acct.ID); err != nil {
			return translate(err, none)
		}
		return s.audit(ctx, tx, a, "business.member.remove", businessRef+"/"+addr,
			map[string]string{"role": old.Role, "staff_id": old.StaffID}, nil)
	})
}
