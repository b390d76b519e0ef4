package sqlstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/linkslot/linkslot/internal/store"
)

// Connected calendars, their synced busy times, the events written into
// them, and reminders (docs/calendars.md).

type staffCalendarRow struct {
	StaffID        string `gorm:"primaryKey"`
	BusinessID     string
	Kind           string
	URL            string `gorm:"column:url"`
	Username       string
	PasswordSealed []byte
	CollectionTag  string
	SyncToken      string
	WindowStart    *time.Time
	WindowEnd      *time.Time
	SyncedAt       *time.Time
	AttemptedAt    *time.Time
	LastError      string
	Objects        int
	Busy           int
	BusyTag        string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (staffCalendarRow) TableName() string { return "staff_calendars" }

type calendarObjectRow struct {
	StaffID string `gorm:"primaryKey"`
	Href    string `gorm:"primaryKey"`
	ETag    string `gorm:"column:etag"`
	Data    string
}

func (calendarObjectRow) TableName() string { return "calendar_objects" }

type calendarBusyRow struct {
	StaffID  string
	Href     string
	StartsAt time.Time
	EndsAt   time.Time
}

func (calendarBusyRow) TableName() string { return "calendar_busy" }

type calendarEventRow struct {
	BookingID string `gorm:"primaryKey"`
	StaffID   string
	Href      string
	ETag      string `gorm:"column:etag"`
	Version   int
	Removed   bool
	UpdatedAt time.Time
}

func (calendarEventRow) TableName() string { return "calendar_events" }

type businessRemindersRow struct {
	BusinessID string `gorm:"primaryKey"`
	Offsets    string
	UpdatedAt  time.Time
}

func (businessRemindersRow) TableName() string { return "business_reminders" }

func toStaffCalendar(r staffCalendarRow) store.StaffCalendar {
	return store.StaffCalendar{StaffID: r.StaffID, BusinessID: r.BusinessID, Kind: r.Kind, URL: r.URL, Username: r.Username,
		PasswordSealed: r.PasswordSealed, CollectionTag: r.CollectionTag, SyncToken: r.SyncToken, WindowStart: store.UTC(deref(r.WindowStart)),
		WindowEnd: store.UTC(deref(r.WindowEnd)), SyncedAt: utcPtr(r.SyncedAt), AttemptedAt: utcPtr(r.AttemptedAt),
		LastError: r.LastError, Objects: r.Objects, Busy: r.Busy, CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt)}
}

// PutStaffCalendar implements store.Calendars.
func (s *Store) PutStaffCalendar(ctx context.Context, c store.StaffCalendar) error {
	now := store.UTC(c.UpdatedAt)
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now
	}
	row := staffCalendarRow{StaffID: c.StaffID, BusinessID: c.BusinessID, Kind: c.Kind, URL: c.URL, Username: c.Username,
		PasswordSealed: c.PasswordSealed, BusyTag: store.RandomString(10), CreatedAt: store.UTC(c.CreatedAt), UpdatedAt: now}
	return s.tx(ctx, func(tx *gorm.DB) error {
		// The cascade drops what the previous calendar's syncs stored.
		if err := tx.Where("staff_id = ?", c.StaffID).Delete(&staffCalendarRow{}).Error; err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return newCalendarTag(tx, c.BusinessID)
	})
}

// newCalendarTag draws a new calendar tag for a business whose calendars'
// busy times may have changed, so that availability no longer answers
// from the times kept under the old one (store.StaffDay.CalendarTag); the
// tag is empty once no staff member of the business has a calendar.
func newCalendarTag(tx *gorm.DB, businessID string) error {
	return tx.Exec(`UPDATE businesses SET calendar_tag = CASE
  WHEN EXISTS (SELECT 1 FROM staff_calendars WHERE business_id = ?) THEN ? ELSE '' END
WHERE id = ?`, businessID, store.RandomString(10), businessID).Error
}

// GetStaffCalendar implements store.Calendars.
func (s *Store) GetStaffCalendar(ctx context.Context, staffID string) (store.StaffCalendar, error) {
	var r staffCalendarRow
	if err := s.q(ctx).Where("staff_id = ?", staffID).Take(&r).Error; err != nil {
		return store.StaffCalendar{}, translate(err)
	}
	return toStaffCalendar(r), nil
}

// ListStaffCalendars implements store.Calendars.
func (s *Store) ListStaffCalendars(ctx context.Context, businessID string) ([]store.StaffCalendar, error) {
	q := s.q(ctx).Order("staff_id")
	if businessID != "" {
		q = q.Where("business_id = ?", businessID)
	}
	var rows []staffCalendarRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.StaffCalendar, len(rows))
	for i, r := range rows {
		out[i] = toStaffCalendar(r)
	}
	return out, nil
}

// DeleteStaffCalendar implements store.Calendars.
func (s *Store) DeleteStaffCalendar(ctx context.Context, staffID string) error {
	return s.tx(ctx, func(tx *gorm.DB) error {
		var r staffCalendarRow
		if err := tx.Select("staff_id", "business_id").Where("staff_id = ?", staffID).Take(&r).Error; err != nil {
			return err
		}
		if err := tx.Where("staff_id = ?", staffID).Delete(&staffCalendarRow{}).Error; err != nil {
			return err
		}
		return newCalendarTag(tx, r.BusinessID)
	})
}

// ListCalendarObjects implements store.Calendars.
func (s *Store) ListCalendarObjects(ctx context.Context, staffID string, withData bool) ([]store.CalendarObject, error) {
	q := s.q(ctx).Where("staff_id = ?", staffID).Order("href")
	if !withData {
		q = q.Select("staff_id", "href", "etag")
	}
	var rows []calendarObjectRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.CalendarObject, len(rows))
	for i, r := range rows {
		out[i] = store.CalendarObject{Href: r.Href, ETag: r.ETag, Data: r.Data}
	}
	return out, nil
}

// ListCalendarBusy implements store.Calendars. The lower bound on
// starts_at keeps the read on the (staff_id, starts_at) index: no busy
// time is longer than store.MaxBusySpan.
func (s *Store) ListCalendarBusy(ctx context.Context, staffID string, from, to time.Time) ([]store.CalendarBusy, error) {
	var rows []calendarBusyRow
	err := s.q(ctx).Where("staff_id = ? AND starts_at < ? AND starts_at > ? AND ends_at > ?", staffID, store.UTC(to),
		store.UTC(from.Add(-store.MaxBusySpan)), store.UTC(from)).Order("starts_at, ends_at, href").Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.CalendarBusy, len(rows))
	for i, r := range rows {
		out[i] = store.CalendarBusy{Href: r.Href, StartsAt: store.UTC(r.StartsAt), EndsAt: store.UTC(r.EndsAt)}
	}
	return out, nil
}

// calendarBatch bounds the rows of one INSERT (PostgreSQL takes at most
// 65,535 parameters in a statement).
const calendarBatch = 1000

// ApplyCalendarSync implements store.Calendars.
func (s *Store) ApplyCalendarSync(ctx context.Context, c store.CalendarSync) error {
	at := store.UTC(c.At)
	return s.tx(ctx, func(tx *gorm.DB) error {
		if c.Replace {
			q := tx.Where("staff_id = ?", c.StaffID)
			if len(c.Keep) > 0 {
				q = q.Where("href NOT IN ?", c.Keep)
			}
			if err := q.Delete(&calendarObjectRow{}).Error; err != nil {
				return err
			}
			if err := tx.Where("staff_id = ?", c.StaffID).Delete(&calendarBusyRow{}).Error; err != nil {
				return err
			}
		} else {
			gone := append(slicesClone(c.Remove), hrefsOf(c.Upsert)...)
			for i := 0; i < len(gone); i += calendarBatch {
				part := gone[i:min(i+calendarBatch, len(gone))]
				if err := tx.Where("staff_id = ? AND href IN ?", c.StaffID, part).Delete(&calendarBusyRow{}).Error; err != nil {
					return err
				}
				if err := tx.Where("staff_id = ? AND href IN ?", c.StaffID, part).Delete(&calendarObjectRow{}).Error; err != nil {
					return err
				}
			}
		}
		objs := make([]calendarObjectRow, len(c.Upsert))
		for i, o := range c.Upsert {
			objs[i] = calendarObjectRow{StaffID: c.StaffID, Href: o.Href, ETag: o.ETag, Data: o.Data}
		}
		if len(objs) > 0 {
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).CreateInBatches(&objs, calendarBatch/4).Error; err != nil {
				return err
			}
		}
		busy := make([]calendarBusyRow, len(c.Busy))
		for i, b := range c.Busy {
			busy[i] = calendarBusyRow{StaffID: c.StaffID, Href: b.Href, StartsAt: store.UTC(b.StartsAt), EndsAt: store.UTC(b.EndsAt)}
		}
		if len(busy) > 0 {
			if err := tx.CreateInBatches(&busy, calendarBatch).Error; err != nil {
				return err
			}
		}
		var counts struct{ Objects, Busy int }
		if err := tx.Raw(`SELECT (SELECT COUNT(*) FROM calendar_objects WHERE staff_id = ?) AS objects,
       (SELECT COUNT(*) FROM calendar_busy WHERE staff_id = ?) AS busy`, c.StaffID, c.StaffID).Scan(&counts).Error; err != nil {
			return err
		}
		res := tx.Model(&staffCalendarRow{}).Where("staff_id = ?", c.StaffID).Updates(map[string]any{
			"collection_tag": c.CollectionTag, "sync_token": c.SyncToken, "window_start": store.UTC(c.WindowStart), "window_end": store.UTC(c.WindowEnd),
			"synced_at": at, "attempted_at": at, "last_error": "", "objects": counts.Objects, "busy": counts.Busy, "updated_at": at})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return store.ErrNotFound
		}
		if !c.Replace && len(c.Remove) == 0 && len(c.Upsert) == 0 && len(c.Busy) == 0 {
			return nil // nothing new: the busy times and their tag stay
		}
		if err := tx.Model(&staffCalendarRow{}).Where("staff_id = ?", c.StaffID).Update("busy_tag", store.RandomString(10)).Error; err != nil {
			return err
		}
		var r staffCalendarRow
		if err := tx.Select("business_id").Where("staff_id = ?", c.StaffID).Take(&r).Error; err != nil {
			return err
		}
		return newCalendarTag(tx, r.BusinessID)
	})
}

func hrefsOf(os []store.CalendarObject) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.Href
	}
	return out
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// RecordCalendarError implements store.Calendars.
func (s *Store) RecordCalendarError(ctx context.Context, staffID string, at time.Time, msg string) error {
	at = store.UTC(at)
	res := s.q(ctx).Model(&staffCalendarRow{}).Where("staff_id = ?", staffID).
		Updates(map[string]any{"attempted_at": at, "last_error": msg, "updated_at": at})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return nil
}

// GetCalendarEvent implements store.Calendars.
func (s *Store) GetCalendarEvent(ctx context.Context, bookingID string) (store.CalendarEvent, error) {
	var r calendarEventRow
	if err := s.q(ctx).Where("booking_id = ?", bookingID).Take(&r).Error; err != nil {
		return store.CalendarEvent{}, translate(err)
	}
	return store.CalendarEvent{BookingID: r.BookingID, StaffID: r.StaffID, Href: r.Href, ETag: r.ETag, Version: r.Version,
		Removed: r.Removed, UpdatedAt: store.UTC(r.UpdatedAt)}, nil
}

// PutCalendarEvent implements store.Calendars.
func (s *Store) PutCalendarEvent(ctx context.Context, e store.CalendarEvent) error {
	r := calendarEventRow{BookingID: e.BookingID, StaffID: e.StaffID, Href: e.Href, ETag: e.ETag, Version: e.Version,
		Removed: e.Removed, UpdatedAt: store.UTC(e.UpdatedAt)}
	return translate(s.q(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&r).Error)
}

// ReminderOffsets implements store.Calendars.
func (s *Store) ReminderOffsets(ctx context.Context, businessID string) ([]time.Duration, error) {
	var r businessRemindersRow
	err := s.q(ctx).Where("business_id = ?", businessID).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return append([]time.Duration(nil), store.DefaultReminders...), nil
	}
	if err != nil {
		return nil, translate(err)
	}
	var out []time.Duration
	for _, f := range strings.Split(r.Offsets, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		m, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, time.Duration(m)*time.Minute)
	}
	return out, nil
}

// SetReminderOffsets implements store.Calendars.
func (s *Store) SetReminderOffsets(ctx context.Context, businessID string, offsets []time.Duration, now time.Time) error {
	fs := make([]string, len(offsets))
	for i, o := range offsets {
		fs[i] = strconv.Itoa(int(o / time.Minute))
	}
	r := businessRemindersRow{BusinessID: businessID, Offsets: strings.Join(fs, ","), UpdatedAt: store.UTC(now)}
	return translate(s.q(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&r).Error)
}
