package businessui

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Calendars is what the console's Calendars page calls: the staff members'
// connected calendars and the business's reminders (docs/calendars.md),
// as admin.Service answers them. Changes are audited with the member's
// account as the actor.
type Calendars interface {
	StaffCalendar(ctx context.Context, businessRef, staffRef string) (admin.CalendarInfo, error)
	SyncStaffCalendar(ctx context.Context, businessRef, staffRef string) (admin.CalendarInfo, error)
	SetStaffCalendar(ctx context.Context, a admin.Actor, businessRef, staffRef string, c calendar.Connect) (admin.CalendarInfo, error)
	RemoveStaffCalendar(ctx context.Context, a admin.Actor, businessRef, staffRef string) error
	GetReminders(ctx context.Context, businessRef string) (admin.Reminders, error)
	SetReminders(ctx context.Context, a admin.Actor, businessRef string, before []string) (admin.Reminders, error)
}

var _ Calendars = (*admin.Service)(nil)

// calendarRow is one staff member's calendar as the page shows it: never
// its password.
type calendarRow struct {
	Staff       store.Staff
	Connected   bool
	Kind        string // caldav or ics
	KindLabel   string
	URL         string
	Username    string
	SyncedAt    string // the last good sync, in the business's zone
	AttemptedAt string // the last sync, good or not
	Objects     int
	BusyTimes   int
	LastError   string // word for word
	StillUses   string // what availability uses meanwhile
	// Form is the Change calendar form's values after a refused change.
	Form map[string]string
}

type calendarsData struct {
	None      bool // this server has no calendar service
	Rows      []calendarRow
	Reminders string // "24h, 2h" or "off"; owners only
	Before    string // the reminders form's value
}

// consoleTime is how the page says a time: in the business's zone.
const consoleTime = "Mon 2 Jan 2006 15:04 MST"

func calendarRowOf(st store.Staff, info admin.CalendarInfo, loc *time.Location) calendarRow {
	row := calendarRow{Staff: st, Connected: true, Kind: info.Kind, URL: info.URL, Username: info.Username,
		Objects: info.Objects, BusyTimes: info.BusyTimes, LastError: info.LastError, SyncedAt: "never", AttemptedAt: "never"}
	row.KindLabel = "iCalendar URL (read only)"
	if info.Kind == store.CalendarCalDAV {
		row.KindLabel = "CalDAV (read and written)"
	}
	if info.SyncedAt != nil {
		row.SyncedAt = info.SyncedAt.In(loc).Format(consoleTime)
	}
	if info.AttemptedAt != nil {
		row.AttemptedAt = info.AttemptedAt.In(loc).Format(consoleTime)
	}
	if info.LastError != "" {
		if info.SyncedAt != nil {
			row.StillUses = "Availability still uses the sync of " + row.SyncedAt + "."
		} else {
			row.StillUses = "Availability uses no busy times of this calendar until a sync succeeds."
		}
	}
	return row
}

// visibleStaff is the staff record ref among the member's reach: all of
// the business's for owners, their own for staff.
func (h *Handler) visibleStaff(ctx context.Context, m business.Membership, ref string) (store.Staff, bool, error) {
	cat, err := h.svc.Catalog(ctx, m)
	if err != nil {
		return store.Staff{}, false, err
	}
	for _, st := range cat.Staff {
		if st.Reference == ref && (m.IsOwner() || st.ID == m.StaffID) {
			return st, true, nil
		}
	}
	return store.Staff{}, false, nil
}

func (h *Handler) getCalendars(w http.ResponseWriter, r *http.Request, p *page) {
	h.showCalendars(w, r, p, http.StatusOK, "", nil, "")
}

// showCalendars renders the page; formStaff's Change calendar form shows
// form (after a refused change), and before is the reminders form's value.
func (h *Handler) showCalendars(w http.ResponseWriter, r *http.Request, p *page, status int, formStaff string, form map[string]string, before string) {
	ctx := r.Context()
	d := calendarsData{None: h.calendars == nil}
	if !d.None {
		cat, err := h.svc.Catalog(ctx, p.M)
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		loc := business.Location(p.M.Business)
		for _, st := range cat.Staff {
			if !p.M.IsOwner() && st.ID != p.M.StaffID {
				continue
			}
			info, err := h.calendars.StaffCalendar(ctx, p.M.Business.Reference, st.Reference)
			row := calendarRow{Staff: st}
			switch e, ok := problem.As(err); {
			case err == nil:
				row = calendarRowOf(st, info, loc)
			case ok && e.Code == problem.CodeNotFound:
			default:
				h.serverError(w, r, err)
				return
			}
			if st.Reference == formStaff {
				row.Form = form
			}
			d.Rows = append(d.Rows, row)
		}
		if p.M.IsOwner() {
			rem, err := h.calendars.GetReminders(ctx, p.M.Business.Reference)
			if err != nil {
				h.serverError(w, r, err)
				return
			}
			d.Reminders = "off"
			if len(rem.Before) > 0 {
				d.Reminders = strings.Join(rem.Before, ", ")
			}
			d.Before = before
			if d.Before == "" {
				d.Before = d.Reminders
			}
		}
	}
	p.Title, p.Nav, p.Data = "Calendars", "calendars", d
	if p.Notice == "" {
		p.Notice = notice(r)
	}
	h.render(w, r, status, "calendars", p)
}

// calendarStaff answers the staff member of the address, or 404 when it is
// outside the member's reach or the server has no calendar service.
func (h *Handler) calendarStaff(w http.ResponseWriter, r *http.Request, p *page) (store.Staff, bool) {
	if h.calendars == nil {
		h.notFound(w, r)
		return store.Staff{}, false
	}
	st, ok, err := h.visibleStaff(r.Context(), p.M, r.PathValue("staff"))
	if err != nil {
		h.serverError(w, r, err)
		return store.Staff{}, false
	}
	if !ok {
		h.notFound(w, r)
		return store.Staff{}, false
	}
	return st, true
}

func (p *page) actor(r *http.Request) admin.Actor { return admin.Actor{ID: p.Account.ID} }

// refused turns a refusal of the admin service into the page's problems.
func refused(err error) ([]problem.Problem, bool) {
	if ps, ok := problemsOf(err); ok {
		return ps, true
	}
	if e, ok := problem.As(err); ok && (e.Code == problem.CodeInvalidArgument || e.Code == problem.CodeInvalidRequest) {
		return []problem.Problem{{Path: e.Field, Message: e.Message}}, true
	}
	return nil, false
}

func (h *Handler) postCalendarSync(w http.ResponseWriter, r *http.Request, p *page) {
	st, ok := h.calendarStaff(w, r, p)
	if !ok {
		return
	}
	info, err := h.calendars.SyncStaffCalendar(r.Context(), p.M.Business.Reference, st.Reference)
	if err != nil {
		if ps, ok := refused(err); ok {
			p.Problems = ps
			h.showCalendars(w, r, p, http.StatusBadRequest, "", nil, "")
			return
		}
		h.fail(w, r, err)
		return
	}
	done := "calendar-synced"
	if info.LastError != "" {
		done = "calendar-sync-failed"
	}
	redirect(w, r, p.Base()+"/calendars", done)
}

func (h *Handler) postCalendar(w http.ResponseWriter, r *http.Request, p *page) {
	st, ok := h.calendarStaff(w, r, p)
	if !ok {
		return
	}
	form := map[string]string{}
	for _, k := range []string{"kind", "url", "username"} {
		form[k] = strings.TrimSpace(r.PostFormValue(k))
	}
	c := calendar.Connect{Kind: form["kind"], URL: form["url"]}
	if c.Kind == store.CalendarCalDAV {
		c.Username, c.Password = form["username"], r.PostFormValue("password")
	}
	var ps []problem.Problem
	if c.Kind != store.CalendarCalDAV && c.Kind != store.CalendarICS {
		ps = append(ps, problem.Problem{Path: "kind", Message: "Choose CalDAV or an iCalendar URL."})
	}
	if len(ps) == 0 {
		info, err := h.calendars.SetStaffCalendar(r.Context(), p.actor(r), p.M.Business.Reference, st.Reference, c)
		if err == nil {
			done := "calendar-set"
			if info.LastError != "" {
				done = "calendar-set-failed"
			}
			redirect(w, r, p.Base()+"/calendars", done)
			return
		}
		if ps, ok = refused(err); !ok {
			h.fail(w, r, err)
			return
		}
	}
	p.Problems = ps
	h.showCalendars(w, r, p, http.StatusBadRequest, st.Reference, form, "")
}

func (h *Handler) postCalendarDisconnect(w http.ResponseWriter, r *http.Request, p *page) {
	st, ok := h.calendarStaff(w, r, p)
	if !ok {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		p.Problems = []problem.Problem{{Path: "confirm", Message: "Tick “Yes, disconnect " + st.Name + "'s calendar” to disconnect it."}}
		h.showCalendars(w, r, p, http.StatusBadRequest, "", nil, "")
		return
	}
	err := h.calendars.RemoveStaffCalendar(r.Context(), p.actor(r), p.M.Business.Reference, st.Reference)
	if e, ok := problem.As(err); ok && e.Code == problem.CodeNotFound {
		redirect(w, r, p.Base()+"/calendars", "calendar-gone")
		return
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, err)
		return
	}
	redirect(w, r, p.Base()+"/calendars", "calendar-removed")
}

func (h *Handler) postReminders(w http.ResponseWriter, r *http.Request, p *page) {
	if h.calendars == nil {
		h.notFound(w, r)
		return
	}
	before := strings.TrimSpace(r.PostFormValue("before"))
	_, err := h.calendars.SetReminders(r.Context(), p.actor(r), p.M.Business.Reference, strings.Split(before, ","))
	if err == nil {
		redirect(w, r, p.Base()+"/calendars", "reminders")
		return
	}
	ps, ok := refused(err)
	if !ok {
		h.fail(w, r, err)
		return
	}
	p.Problems = ps
	h.showCalendars(w, r, p, http.StatusBadRequest, "", nil, before)
}
