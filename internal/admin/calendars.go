package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Connected calendars and reminders (docs/calendars.md).

// CalendarInfo is a staff member's connected calendar as administrators see
// it: never its password.
type CalendarInfo struct {
	Business    string     `json:"business"`
	Staff       string     `json:"staff"`
	Kind        string     `json:"kind"` // caldav or ics
	URL         string     `json:"url"`
	Username    string     `json:"username,omitempty"`
	SyncedAt    *time.Time `json:"synced_at"`    // the last good sync: what availability reads
	AttemptedAt *time.Time `json:"attempted_at"` // the last sync, good or not
	LastError   string     `json:"last_error"`   // what went wrong and what to fix; empty when the last sync was good
	Objects     int        `json:"objects"`
	BusyTimes   int        `json:"busy_times"`
}

var errNoCalendars = problem.New(problem.CodeInvalidRequest, "Connected calendars need LINKSLOT_SECRET_KEY, which seals their passwords.")

func calendarInfo(c store.StaffCalendar, business, staff string) CalendarInfo {
	return CalendarInfo{Business: business, Staff: staff, Kind: c.Kind, URL: c.URL, Username: c.Username, SyncedAt: c.SyncedAt,
		AttemptedAt: c.AttemptedAt, LastError: c.LastError, Objects: c.Objects, BusyTimes: c.Busy}
}

// staffOf finds a business and one of its staff members by reference.
func (s *Service) staffOf(ctx context.Context, businessRef, staffRef string) (store.Business, store.Staff, error) {
	b, err := s.store.GetBusiness(ctx, strings.TrimSpace(businessRef))
	if err != nil {
		return store.Business{}, store.Staff{}, translate(err, "business "+businessRef)
	}
	cat, err := s.store.LoadCatalogByID(ctx, b.ID)
	if err != nil {
		return store.Business{}, store.Staff{}, err
	}
	for _, st := range cat.Staff {
		if st.Reference == strings.TrimSpace(staffRef) {
			return b, st, nil
		}
	}
	return store.Business{}, store.Staff{}, problem.Newf(problem.CodeNotFound, "%s has no staff member %q.", b.Name, staffRef).WithField("staff")
}

// SetStaffCalendar connects a staff member's calendar (replacing any
// other), audited, and syncs it once: the answer shows that sync's outcome.
func (s *Service) SetStaffCalendar(ctx context.Context, a Actor, businessRef, staffRef string, c calendar.Connect) (CalendarInfo, error) {
	if s.calendars == nil {
		return CalendarInfo{}, errNoCalendars
	}
	b, st, err := s.staffOf(ctx, businessRef, staffRef)
	if err != nil {
		return CalendarInfo{}, err
	}
	c.StaffID, c.BusinessID = st.ID, b.ID
	switch old, err := s.store.GetStaffCalendar(ctx, st.ID); {
	case err == nil:
		c.Previous = &old // its password is kept for the same account (calendar.Connect)
	case !errors.Is(err, store.ErrNotFound):
		return CalendarInfo{}, err
	}
	row, err := s.calendars.Prepare(c)
	if err != nil {
		return CalendarInfo{}, err
	}
	info := calendarInfo(row, b.Reference, st.Reference)
	err = s.inTx(ctx, func(tx Tx) error {
		if err := tx.PutStaffCalendar(ctx, row); err != nil {
			return err
		}
		return s.audit(ctx, tx, a, "calendar.set", b.Reference+"/"+st.Reference, nil, info)
	})
	if err != nil {
		return CalendarInfo{}, translate(err, "calendar")
	}
	return s.SyncStaffCalendar(ctx, businessRef, staffRef)
}

// SyncStaffCalendar syncs a staff member's calendar now and answers its
// state: a failed sync is its LastError, not an error.
func (s *Service) SyncStaffCalendar(ctx context.Context, businessRef, staffRef string) (CalendarInfo, error) {
	if s.calendars == nil {
		return CalendarInfo{}, errNoCalendars
	}
	b, st, err := s.staffOf(ctx, businessRef, staffRef)
	if err != nil {
		return CalendarInfo{}, err
	}
	res, err := s.calendars.Sync(ctx, st.ID)
	var p *calendar.Problem
	switch {
	case errors.Is(err, store.ErrNotFound):
		return CalendarInfo{}, problem.Newf(problem.CodeNotFound, "%s has no connected calendar.", st.Name)
	case err != nil && !errors.As(err, &p):
		return CalendarInfo{}, err
	case res.Skipped:
		// Another process is syncing it: its outcome is what the next
		// show answers.
	}
	return s.StaffCalendar(ctx, b.Reference, st.Reference)
}

// StaffCalendar answers a staff member's connected calendar.
func (s *Service) StaffCalendar(ctx context.Context, businessRef, staffRef string) (CalendarInfo, error) {
	b, st, err := s.staffOf(ctx, businessRef, staffRef)
	if err != nil {
		return CalendarInfo{}, err
	}
	c, err := s.store.GetStaffCalendar(ctx, st.ID)
	if errors.Is(err, store.ErrNotFound) {
		return CalendarInfo{}, problem.Newf(problem.CodeNotFound, "%s has no connected calendar.", st.Name)
	}
	if err != nil {
		return CalendarInfo{}, err
	}
	return calendarInfo(c, b.Reference, st.Reference), nil
}

// RemoveStaffCalendar disconnects a staff member's calendar, audited; its
// busy times go with it. The spans they blocked from now on are offered to
// the waitlist once the disconnect committed (Config.Freed), as after a
// sync that frees time.
func (s *Service) RemoveStaffCalendar(ctx context.Context, a Actor, businessRef, staffRef string) error {
	b, st, err := s.staffOf(ctx, businessRef, staffRef)
	if err != nil {
		return err
	}
	now := s.now()
	var freed []calendar.Span
	err = s.inTx(ctx, func(tx Tx) error {
		if s.freed != nil {
			// What the calendar blocks, read in the transaction that
			// deletes it.
			cal, err := tx.GetStaffCalendar(ctx, st.ID)
			if err != nil {
				return err
			}
			if cal.WindowEnd.After(now) {
				busy, err := tx.ListCalendarBusy(ctx, st.ID, now, cal.WindowEnd)
				if err != nil {
					return err
				}
				freed = calendar.MergeBusy(busy, now, cal.WindowEnd)
			}
		}
		if err := tx.DeleteStaffCalendar(ctx, st.ID); err != nil {
			return err
		}
		return s.audit(ctx, tx, a, "calendar.remove", b.Reference+"/"+st.Reference, nil, nil)
	})
	if err != nil {
		return translate(err, "calendar of "+st.Reference)
	}
	// Committed: each span is offered in a transaction of its own.
	for _, sp := range freed {
		if err := s.freed(ctx, b.ID, st.ID, sp.Start, sp.End); err != nil {
			s.log.WarnContext(ctx, "calendar: offering the time a disconnected calendar freed to the waitlist", "staff", st.ID,
				"start", sp.Start, "end", sp.End, "err", err)
		}
	}
	return nil
}

// Reminders is a business's reminder setting.
type Reminders struct {
	Business string   `json:"business"`
	Before   []string `json:"before"` // "24h", "2h", "90m"; empty: off
}

// FormatOffset says a reminder offset as the CLI and the API take it.
func FormatOffset(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dm", int(d/time.Minute))
}

// ParseOffsets reads reminder offsets: "24h,2h", "90m"; "off" or nothing
// turns reminders off. Each is between 5 minutes and 14 days, whole
// minutes.
func ParseOffsets(list []string) ([]time.Duration, error) {
	var out []time.Duration
	seen := map[time.Duration]bool{}
	for _, f := range list {
		f = strings.TrimSpace(strings.ToLower(f))
		if f == "" || f == "off" {
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d%time.Minute != 0 || d < 5*time.Minute || d > 14*24*time.Hour {
			return nil, problem.Newf(problem.CodeInvalidArgument, "A reminder is a time before the appointment between 5m and 336h in whole minutes, such as 24h or 90m; %q is not.", f).WithField("before")
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out, nil
}

// SetReminders sets a business's reminders (none: off), audited.
func (s *Service) SetReminders(ctx context.Context, a Actor, businessRef string, before []string) (Reminders, error) {
	offs, err := ParseOffsets(before)
	if err != nil {
		return Reminders{}, err
	}
	b, err := s.store.GetBusiness(ctx, strings.TrimSpace(businessRef))
	if err != nil {
		return Reminders{}, translate(err, "business "+businessRef)
	}
	out := Reminders{Business: b.Reference, Before: []string{}}
	for _, d := range offs {
		out.Before = append(out.Before, FormatOffset(d))
	}
	err = s.inTx(ctx, func(tx Tx) error {
		if err := tx.SetReminderOffsets(ctx, b.ID, offs, s.now()); err != nil {
			return err
		}
		return s.audit(ctx, tx, a, "reminders.set", b.Reference, nil, out)
	})
	return out, translate(err, "reminders")
}

// GetReminders answers a business's reminders.
func (s *Service) GetReminders(ctx context.Context, businessRef string) (Reminders, error) {
	b, err := s.store.GetBusiness(ctx, strings.TrimSpace(businessRef))
	if err != nil {
		return Reminders{}, translate(err, "business "+businessRef)
	}
	offs, err := s.store.ReminderOffsets(ctx, b.ID)
	if err != nil {
		return Reminders{}, err
	}
	out := Reminders{Business: b.Reference, Before: []string{}}
	for _, d := range offs {
		out.Before = append(out.Before, FormatOffset(d))
	}
	return out, nil
}
