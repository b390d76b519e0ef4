package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// The members of businesses, the invitations of staff, and what the
// business console reads and writes (docs/reference.md §16).

type memberRow struct {
	BusinessID string `gorm:"primaryKey"`
	AccountID  string `gorm:"primaryKey"`
	Role       string
	StaffID    *string
	CreatedAt  time.Time
}

func (memberRow) TableName() string { return "business_members" }

// memberListRow is a membership with its account's address. The listings
// leave out the memberships of deleted accounts (tombstones).
type memberListRow struct {
	BusinessID string
	AccountID  string
	Role       string
	StaffID    *string
	CreatedAt  time.Time
	Email      string
}

func (r memberListRow) member() store.Member {
	return toMember(memberRow{BusinessID: r.BusinessID, AccountID: r.AccountID, Role: r.Role, StaffID: r.StaffID, CreatedAt: r.CreatedAt}, r.Email)
}

type invitationRow struct {
	TokenHash  string `gorm:"primaryKey"`
	BusinessID string
	StaffID    string
	Email      string
	InvitedBy  string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	UsedAt     *time.Time
}

func (invitationRow) TableName() string { return "member_invitations" }

func toMember(r memberRow, email string) store.Member {
	return store.Member{BusinessID: r.BusinessID, AccountID: r.AccountID, Role: r.Role, StaffID: deref(r.StaffID),
		CreatedAt: store.UTC(r.CreatedAt), Email: email}
}

// AddMember implements store.Members.
func (s *Store) AddMember(ctx context.Context, m store.Member) error {
	return s.create(ctx, &memberRow{BusinessID: m.BusinessID, AccountID: m.AccountID, Role: m.Role,
		StaffID: nullable(m.StaffID), CreatedAt: store.UTC(m.CreatedAt)})
}

// GetMember implements store.Members.
func (s *Store) GetMember(ctx context.Context, businessID, accountID string) (store.Member, error) {
	var r memberListRow
	err := s.memberList(ctx).Where("m.business_id = ? AND m.account_id = ?", businessID, accountID).Take(&r).Error
	if err != nil {
		return store.Member{}, translate(err)
	}
	return r.member(), nil
}

func (s *Store) memberList(ctx context.Context) *gorm.DB {
	return s.q(ctx).Table("business_members AS m").
		Select("m.business_id, m.account_id, m.role, m.staff_id, m.created_at, a.email").
		Joins("JOIN accounts a ON a.id = m.account_id AND a.deleted_at IS NULL")
}

func (s *Store) members(db *gorm.DB) ([]store.Member, error) {
	var rows []memberListRow
	if err := db.Order("m.role, a.email, m.business_id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Member, len(rows))
	for i, r := range rows {
		out[i] = r.member()
	}
	return out, nil
}

// ListBusinessMembers implements store.Members ("owner" sorts before
// "staff").
func (s *Store) ListBusinessMembers(ctx context.Context, businessID string) ([]store.Member, error) {
	return s.members(s.memberList(ctx).Where("m.business_id = ?", businessID))
}

// ListAccountMembers implements store.Members.
func (s *Store) ListAccountMembers(ctx context.Context, accountID string) ([]store.Member, error) {
	return s.members(s.memberList(ctx).Where("m.account_id = ?", accountID))
}

// RemoveMember implements store.Members.
func (s *Store) RemoveMember(ctx context.Context, businessID, accountID string) error {
	res := s.q(ctx).Delete(&memberRow{}, "business_id = ? AND account_id = ?", businessID, accountID)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return nil
}

// CreateMemberInvitation implements store.Members.
func (s *Store) CreateMemberInvitation(ctx context.Context, inv store.MemberInvitation) error {
	return s.create(ctx, &invitationRow{TokenHash: inv.TokenHash, BusinessID: inv.BusinessID, StaffID: inv.StaffID,
		Email: inv.Email, InvitedBy: inv.InvitedBy, CreatedAt: store.UTC(inv.CreatedAt), ExpiresAt: store.UTC(inv.ExpiresAt),
		UsedAt: utcPtr(inv.UsedAt)})
}

// GetMemberInvitation implements store.Members.
func (s *Store) GetMemberInvitation(ctx context.Context, tokenHash string) (store.MemberInvitation, error) {
	var r invitationRow
	if err := s.q(ctx).Take(&r, "token_hash = ?", tokenHash).Error; err != nil {
		return store.MemberInvitation{}, translate(err)
	}
	return store.MemberInvitation{TokenHash: r.TokenHash, BusinessID: r.BusinessID, StaffID: r.StaffID, Email: r.Email,
		InvitedBy: r.InvitedBy, CreatedAt: store.UTC(r.CreatedAt), ExpiresAt: store.UTC(r.ExpiresAt), UsedAt: utcPtr(r.UsedAt)}, nil
}

// UseMemberInvitation implements store.Members: one conditional update.
func (s *Store) UseMemberInvitation(ctx context.Context, tokenHash string, now time.Time) error {
	res := s.q(ctx).Model(&invitationRow{}).Where("token_hash = ? AND used_at IS NULL", tokenHash).Update("used_at", store.UTC(now))
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		if _, err := s.GetMemberInvitation(ctx, tokenHash); err != nil {
			return err
		}
		return store.ErrConflict
	}
	return nil
}

// touchBusiness moves the business row's updated_at, the version the
// booking engine's catalog cache compares on every replica.
func touchBusiness(tx *gorm.DB, businessID string) error {
	return tx.Model(&businessRow{}).Where("id = ?", businessID).Update("updated_at", store.SystemClock()).Error
}

// AddTimeOff implements store.Console.
func (s *Store) AddTimeOff(ctx context.Context, businessID string, t store.TimeOff) (store.TimeOff, error) {
	if t.ID == "" {
		t.ID = store.NewID("off")
	}
	t.StartsAt, t.EndsAt = store.UTC(t.StartsAt), store.UTC(t.EndsAt)
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var st staffRow
		if err := tx.Take(&st, "id = ? AND business_id = ?", t.StaffID, businessID).Error; err != nil {
			return err
		}
		if err := tx.Create(&timeOffRow{ID: t.ID, StaffID: t.StaffID, StartsAt: t.StartsAt, EndsAt: t.EndsAt, Reason: t.Reason}).Error; err != nil {
			return err
		}
		return touchBusiness(tx, businessID)
	})
	if err != nil {
		return store.TimeOff{}, translate(err)
	}
	return t, nil
}

// DeleteTimeOff implements store.Console.
func (s *Store) DeleteTimeOff(ctx context.Context, businessID, id string) error {
	return translate(s.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Where("id = ? AND staff_id IN (?)", id, tx.Model(&staffRow{}).Select("id").Where("business_id = ?", businessID)).
			Delete(&timeOffRow{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return store.ErrNotFound
		}
		return touchBusiness(tx, businessID)
	}))
}
