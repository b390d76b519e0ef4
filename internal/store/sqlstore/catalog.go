package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/linkslot/linkslot/internal/store"
)

func toBusiness(r businessRow) store.Business {
	return store.Business{ID: r.ID, Reference: r.Reference, Name: r.Name, Description: r.Description, Category: r.Category,
		City: r.City, Address: r.Address, TimeZone: r.TimeZone, AgentBooking: r.AgentBooking,
		MinNoticeMinutes: r.MinNoticeMinutes, HorizonDays: r.HorizonDays, SlotIntervalMinutes: r.SlotIntervalMinutes,
		CancellationWindowMinutes: r.CancellationWindowMinutes, CancellationFeeCents: r.CancellationFeeCents,
		Currency: r.Currency, CancellationPolicy: r.CancellationPolicy, PrivacyNotice: r.PrivacyNotice,
		BookingURL: r.BookingURL, ContactEmail: r.ContactEmail, ConfirmationWindowMinutes: r.ConfirmationWindowMinutes, CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt)}
}

func fromBusiness(b store.Business, search string) businessRow {
	return businessRow{ID: b.ID, Reference: b.Reference, Name: b.Name, Description: b.Description, Category: b.Category,
		City: b.City, Address: b.Address, TimeZone: b.TimeZone, AgentBooking: b.AgentBooking,
		MinNoticeMinutes: b.MinNoticeMinutes, HorizonDays: b.HorizonDays, SlotIntervalMinutes: b.SlotIntervalMinutes,
		CancellationWindowMinutes: b.CancellationWindowMinutes, CancellationFeeCents: b.CancellationFeeCents,
		Currency: b.Currency, CancellationPolicy: b.CancellationPolicy, PrivacyNotice: b.PrivacyNotice,
		BookingURL: b.BookingURL, ContactEmail: b.ContactEmail, ConfirmationWindowMinutes: b.ConfirmationWindowMinutes, SearchText: search, CreatedAt: store.UTC(b.CreatedAt), UpdatedAt: store.UTC(b.UpdatedAt)}
}

func toService(r serviceRow) store.Service {
	return store.Service{ID: r.ID, BusinessID: r.BusinessID, Reference: r.Reference, Name: r.Name, Description: r.Description,
		DurationMinutes: r.DurationMinutes, PriceCents: r.PriceCents, Currency: r.Currency,
		BufferBeforeMinutes: r.BufferBeforeMinutes, BufferAfterMinutes: r.BufferAfterMinutes, DepositRequired: r.DepositRequired,
		RequiresConfirmation: r.RequiresConfirmation}
}

// searchText is what business search matches: name, category, city and the
// names of the services, lower-cased.
func searchText(c store.Catalog) string {
	parts := []string{c.Business.Name, c.Business.Category, c.Business.City}
	for _, sv := range c.Services {
		parts = append(parts, sv.Name)
	}
	return strings.ToLower(strings.Join(parts, " "))
}

// PutCatalog creates or replaces a business and everything below it.
// Services and staff keep their ids when their reference is unchanged, so
// bookings stay attached; removing one that has bookings answers ErrConflict.
func (s *Store) PutCatalog(ctx context.Context, c store.Catalog) (store.Catalog, error) {
	now := store.SystemClock()
	// The result is built in copies: the caller's slices stay as they were.
	c.Services, c.Staff = slices.Clone(c.Services), slices.Clone(c.Staff)
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var old businessRow
		err := lockFor(tx, s.dialect).Take(&old, "reference = ?", c.Business.Reference).Error
		switch {
		case err == nil:
			c.Business.ID, c.Business.CreatedAt = old.ID, store.UTC(old.CreatedAt)
		case errors.Is(err, gorm.ErrRecordNotFound):
			if c.Business.ID == "" {
				c.Business.ID = store.NewID("biz")
			}
			c.Business.CreatedAt = now
		default:
			return err
		}
		c.Business.UpdatedAt = now
		if err := tx.Save(ptr(fromBusiness(c.Business, searchText(c)))).Error; err != nil {
			return err
		}
		bid := c.Business.ID
		if err := tx.Delete(&businessHoursRow{}, "business_id = ?", bid).Error; err != nil {
			return err
		}
		for _, h := range c.OpeningHours {
			if err := tx.Create(&businessHoursRow{BusinessID: bid, Weekday: int(h.Weekday), StartMin: h.StartMin, EndMin: h.EndMin}).Error; err != nil {
				return err
			}
		}
		// Services, matched by reference.
		var oldSvcs []serviceRow
		if err := tx.Find(&oldSvcs, "business_id = ?", bid).Error; err != nil {
			return err
		}
		svcIDs := map[string]string{}
		for _, r := range oldSvcs {
			svcIDs[r.Reference] = r.ID
		}
		keepSvc := map[string]bool{}
		// remap from the caller's service ids (or references) to stored ids
		idOf := map[string]string{}
		for i, sv := range c.Services {
			id := svcIDs[sv.Reference]
			if id == "" {
				id = store.NewID("svc")
			}
			if sv.ID != "" {
				idOf[sv.ID] = id
			}
			idOf[sv.Reference] = id
			sv.ID, sv.BusinessID = id, bid
			c.Services[i] = sv
			keepSvc[id] = true
			r := serviceRow{ID: sv.ID, BusinessID: bid, Reference: sv.Reference, Name: sv.Name, Description: sv.Description,
				DurationMinutes: sv.DurationMinutes, PriceCents: sv.PriceCents, Currency: sv.Currency,
				BufferBeforeMinutes: sv.BufferBeforeMinutes, BufferAfterMinutes: sv.BufferAfterMinutes, DepositRequired: sv.DepositRequired,
				RequiresConfirmation: sv.RequiresConfirmation}
			if err := tx.Save(&r).Error; err != nil {
				return err
			}
		}
		// Staff, matched by reference.
		var oldStaff []staffRow
		if err := tx.Find(&oldStaff, "business_id = ?", bid).Error; err != nil {
			return err
		}
		stIDs := map[string]string{}
		for _, r := range oldStaff {
			stIDs[r.Reference] = r.ID
		}
		keepStaff := map[string]bool{}
		hours := map[string][]store.HoursWindow{}
		off := map[string][]store.TimeOff{}
		for i, st := range c.Staff {
			id := stIDs[st.Reference]
			if id == "" {
				id = store.NewID("stf")
			}
			if st.ID != "" {
				hours[id] = c.StaffHours[st.ID]
				off[id] = c.StaffTimeOff[st.ID]
			}
			if h, ok := c.StaffHours[st.Reference]; ok {
				hours[id] = h
			}
			if o, ok := c.StaffTimeOff[st.Reference]; ok {
				off[id] = o
			}
			st.ID, st.BusinessID = id, bid
			keepStaff[id] = true
			mapped := make([]string, 0, len(st.ServiceIDs))
			for _, sid := range st.ServiceIDs {
				m, ok := idOf[sid]
				if !ok {
					return fmt.Errorf("staff %q performs unknown service %q", st.Reference, sid)
				}
				mapped = append(mapped, m)
			}
			st.ServiceIDs = mapped
			c.Staff[i] = st
			if err := tx.Save(&staffRow{ID: id, BusinessID: bid, Reference: st.Reference, Name: st.Name}).Error; err != nil {
				return err
			}
			if err := tx.Delete(&staffServiceRow{}, "staff_id = ?", id).Error; err != nil {
				return err
			}
			for _, sid := range mapped {
				if err := tx.Create(&staffServiceRow{StaffID: id, ServiceID: sid}).Error; err != nil {
					return err
				}
			}
			if err := tx.Delete(&staffHoursRow{}, "staff_id = ?", id).Error; err != nil {
				return err
			}
			for _, h := range hours[id] {
				if err := tx.Create(&staffHoursRow{StaffID: id, Weekday: int(h.Weekday), StartMin: h.StartMin, EndMin: h.EndMin}).Error; err != nil {
					return err
				}
			}
			if err := tx.Delete(&timeOffRow{}, "staff_id = ?", id).Error; err != nil {
				return err
			}
			off[id] = slices.Clone(off[id])
			for j, o := range off[id] {
				o.ID, o.StaffID = store.NewID("off"), id
				off[id][j] = o
				if err := tx.Create(&timeOffRow{ID: o.ID, StaffID: id, StartsAt: store.UTC(o.StartsAt), EndsAt: store.UTC(o.EndsAt), Reason: o.Reason}).Error; err != nil {
					return err
				}
			}
		}
		for _, r := range oldStaff {
			if !keepStaff[r.ID] {
				if err := tx.Delete(&staffRow{}, "id = ?", r.ID).Error; err != nil {
					if errors.Is(translate(err), store.ErrConflict) {
						return &store.InUseError{Kind: "staff", Reference: r.Reference}
					}
					return err
				}
			}
		}
		for _, r := range oldSvcs {
			if !keepSvc[r.ID] {
				if err := tx.Delete(&serviceRow{}, "id = ?", r.ID).Error; err != nil {
					if errors.Is(translate(err), store.ErrConflict) {
						return &store.InUseError{Kind: "service", Reference: r.Reference}
					}
					return err
				}
			}
		}
		c.StaffHours, c.StaffTimeOff = hours, off
		if c.Credentials != nil {
			cs, err := replaceCredentials(tx, bid, c.Credentials, now)
			if err != nil {
				return err
			}
			c.Credentials = cs
		}
		return nil
	})
	if err != nil {
		return store.Catalog{}, err
	}
	return c, nil
}

// replaceCredentials writes cs as a business's credentials through tx, in
// order; a credential without UpdatedAt is stamped now.
// A credential equal to one stored keeps that one's UpdatedAt, so that
// importing the same file again does not make it look freshly updated.
func replaceCredentials(tx *gorm.DB, businessID string, cs []store.Credential, now time.Time) ([]store.Credential, error) {
	var old []credentialRow
	if err := tx.Where("business_id = ?", businessID).Find(&old).Error; err != nil {
		return nil, err
	}
	key := func(kind, name, issuer, number, until string) string {
		return strings.Join([]string{kind, name, issuer, number, until}, "\x00")
	}
	kept := map[string]time.Time{}
	for _, r := range old {
		until := ""
		if r.ValidUntil != nil {
			until = *r.ValidUntil
		}
		kept[key(r.Kind, r.Name, r.Issuer, r.Number, until)] = store.UTC(r.UpdatedAt)
	}
	if err := tx.Delete(&credentialRow{}, "business_id = ?", businessID).Error; err != nil {
		return nil, err
	}
	out := make([]store.Credential, len(cs))
	for i, cr := range cs {
		if t, ok := kept[key(cr.Kind, cr.Name, cr.Issuer, cr.Number, cr.ValidUntil)]; ok && cr.UpdatedAt.IsZero() {
			cr.UpdatedAt = t
		}
		if cr.UpdatedAt.IsZero() {
			cr.UpdatedAt = now
		}
		cr.UpdatedAt = store.UTC(cr.UpdatedAt)
		var until *string
		if cr.ValidUntil != "" {
			until = &cr.ValidUntil
		}
		if err := tx.Create(&credentialRow{ID: store.NewID("crd"), BusinessID: businessID, Position: i, Kind: cr.Kind,
			Name: cr.Name, Issuer: cr.Issuer, Number: cr.Number, ValidUntil: until, UpdatedAt: cr.UpdatedAt}).Error; err != nil {
			return nil, err
		}
		out[i] = cr
	}
	return out, nil
}

// ReplaceCredentials replaces a business's self-reported credentials.
func (s *Store) ReplaceCredentials(ctx context.Context, businessID string, cs []store.Credential) error {
	return s.tx(ctx, func(tx *gorm.DB) error {
		_, err := replaceCredentials(tx, businessID, cs, store.SystemClock())
		return err
	})
}

// ListCredentials returns a business's self-reported credentials in order.
func (s *Store) ListCredentials(ctx context.Context, businessID string) ([]store.Credential, error) {
	var rows []credentialRow
	if err := s.q(ctx).Where("business_id = ?", businessID).Order("position").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Credential, len(rows))
	for i, r := range rows {
		out[i] = store.Credential{Kind: r.Kind, Name: r.Name, Issuer: r.Issuer, Number: r.Number, UpdatedAt: store.UTC(r.UpdatedAt)}
		if r.ValidUntil != nil {
			out[i].ValidUntil = *r.ValidUntil
		}
	}
	return out, nil
}

// GetBusiness returns a business by reference.
func (s *Store) GetBusiness(ctx context.Context, reference string) (store.Business, error) {
	var r businessRow
	if err := s.q(ctx).Take(&r, "reference = ?", reference).Error; err != nil {
		return store.Business{}, translate(err)
	}
	return toBusiness(r), nil
}

// LoadCatalog loads a business by reference and everything below it.
func (s *Store) LoadCatalog(ctx context.Context, reference string) (store.Catalog, error) {
	var r businessRow
	if err := s.q(ctx).Take(&r, "reference = ?", reference).Error; err != nil {
		return store.Catalog{}, translate(err)
	}
	return s.loadBelow(ctx, toBusiness(r))
}

// LoadCatalogByID loads a business by id and everything below it.
func (s *Store) LoadCatalogByID(ctx context.Context, id string) (store.Catalog, error) {
	var r businessRow
	if err := s.q(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return store.Catalog{}, translate(err)
	}
	return s.loadBelow(ctx, toBusiness(r))
}

// loadBelow reads hours, services, staff, their services, hours and time off:
// six statements whatever the number of staff.
func (s *Store) loadBelow(ctx context.Context, b store.Business) (store.Catalog, error) {
	c := store.Catalog{Business: b, StaffHours: map[string][]store.HoursWindow{}, StaffTimeOff: map[string][]store.TimeOff{}}
	q := s.q(ctx)
	var bh []businessHoursRow
	if err := q.Where("business_id = ?", b.ID).Order("weekday, start_min").Find(&bh).Error; err != nil {
		return c, translate(err)
	}
	for _, h := range bh {
		c.OpeningHours = append(c.OpeningHours, store.HoursWindow{Weekday: weekday(h.Weekday), StartMin: h.StartMin, EndMin: h.EndMin})
	}
	var svcs []serviceRow
	if err := q.Where("business_id = ?", b.ID).Order("reference").Find(&svcs).Error; err != nil {
		return c, translate(err)
	}
	for _, r := range svcs {
		c.Services = append(c.Services, toService(r))
	}
	var staff []staffRow
	if err := q.Where("business_id = ?", b.ID).Order("reference").Find(&staff).Error; err != nil {
		return c, translate(err)
	}
	staffSub := q.Model(&staffRow{}).Select("id").Where("business_id = ?", b.ID)
	var ss []staffServiceRow
	if err := q.Where("staff_id IN (?)", staffSub).Order("staff_id, service_id").Find(&ss).Error; err != nil {
		return c, translate(err)
	}
	perStaff := map[string][]string{}
	for _, r := range ss {
		perStaff[r.StaffID] = append(perStaff[r.StaffID], r.ServiceID)
	}
	for _, r := range staff {
		ids := perStaff[r.ID]
		if ids == nil {
			ids = []string{}
		}
		c.Staff = append(c.Staff, store.Staff{ID: r.ID, BusinessID: r.BusinessID, Reference: r.Reference, Name: r.Name, ServiceIDs: ids})
	}
	var sh []staffHoursRow
	if err := q.Where("staff_id IN (?)", staffSub).Order("staff_id, weekday, start_min").Find(&sh).Error; err != nil {
		return c, translate(err)
	}
	for _, h := range sh {
		c.StaffHours[h.StaffID] = append(c.StaffHours[h.StaffID], store.HoursWindow{Weekday: weekday(h.Weekday), StartMin: h.StartMin, EndMin: h.EndMin})
	}
	var to []timeOffRow
	if err := q.Where("staff_id IN (?)", staffSub).Order("staff_id, starts_at").Find(&to).Error; err != nil {
		return c, translate(err)
	}
	for _, o := range to {
		c.StaffTimeOff[o.StaffID] = append(c.StaffTimeOff[o.StaffID], store.TimeOff{ID: o.ID, StaffID: o.StaffID,
			StartsAt: store.UTC(o.StartsAt), EndsAt: store.UTC(o.EndsAt), Reason: o.Reason})
	}
	return c, nil
}

// ListBusinesses returns every business ordered by reference.
func (s *Store) ListBusinesses(ctx context.Context) ([]store.Business, error) {
	var rows []businessRow
	if err := s.q(ctx).Order("reference").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Business, len(rows))
	for i, r := range rows {
		out[i] = toBusiness(r)
	}
	return out, nil
}

// SetAgentBooking switches agent booking for a business.
func (s *Store) SetAgentBooking(ctx context.Context, reference string, on bool) (store.Business, error) {
	res := s.q(ctx).Model(&businessRow{}).Where("reference = ?", reference).
		Updates(map[string]any{"agent_booking": on, "updated_at": store.SystemClock()})
	if res.Error != nil {
		return store.Business{}, translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.Business{}, store.ErrNotFound
	}
	return s.GetBusiness(ctx, reference)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// SearchBusinesses matches every word of the query against the search text
// (PostgreSQL answers the ILIKEs from a trigram index) and ranks exact, then
// prefix, then substring name matches first. Only businesses an agent can
// book are searched: agent booking on and an appointment business (a
// restaurant is never bookable here, docs/reference.md §4).
func (s *Store) SearchBusinesses(ctx context.Context, q store.BusinessQuery) ([]store.Business, error) {
	text := strings.ToLower(strings.TrimSpace(q.Text))
	db := s.q(ctx).Model(&businessRow{}).Where("agent_booking = ? AND category = ?", true, store.CategoryAppointment)
	like := "LIKE"
	if s.dialect == "postgres" {
		like = "ILIKE"
	}
	for _, w := range strings.Fields(text) {
		db = db.Where("search_text "+like+" ? ESCAPE '\\'", "%"+likeEscaper.Replace(w)+"%")
	}
	if c := strings.TrimSpace(q.City); c != "" {
		db = db.Where(s.lowerFunc()+"(city) = ?", strings.ToLower(c))
	}
	esc := likeEscaper.Replace(text)
	lname := s.lowerFunc() + "(name)"
	rank := clause.Expr{SQL: "CASE WHEN " + lname + " = ? THEN 0 WHEN " + lname + " LIKE ? ESCAPE '\\' THEN 1 WHEN " + lname + " LIKE ? ESCAPE '\\' THEN 2 ELSE 3 END, name, reference",
		Vars: []any{text, esc + "%", "%" + esc + "%"}}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	var rows []businessRow
	err := db.Order(orderBy(rank)).Limit(limit + 1).Offset(max(q.Offset, 0)).Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.Business, len(rows))
	for i, r := range rows {
		out[i] = toBusiness(r)
	}
	return out, nil
}
