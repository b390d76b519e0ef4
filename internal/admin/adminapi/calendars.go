package adminapi

import (
	"net/http"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/store"
)

// ---- connected calendars and reminders (docs/calendars.md) ----

func (a *api) getCalendar(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	c, err := a.svc.StaffCalendar(r.Context(), r.PathValue("ref"), r.PathValue("staff"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"calendar": c})
}

// putCalendar connects a calendar: {"kind": "caldav", "url", "username",
// "password"} or {"kind": "ics", "url"}. It answers the calendar after its
// first sync (last_error says what to fix when that failed).
func (a *api) putCalendar(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b struct {
		Kind     string `json:"kind"`
		URL      string `json:"url"`
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if !decode(w, r, &b) {
		return
	}
	if b.Kind == "" {
		b.Kind = store.CalendarCalDAV
	}
	c, err := a.svc.SetStaffCalendar(r.Context(), actor, r.PathValue("ref"), r.PathValue("staff"),
		calendar.Connect{Kind: b.Kind, URL: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"calendar": c})
}

func (a *api) syncCalendar(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	c, err := a.svc.SyncStaffCalendar(r.Context(), r.PathValue("ref"), r.PathValue("staff"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"calendar": c})
}

func (a *api) deleteCalendar(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	if err := a.svc.RemoveStaffCalendar(r.Context(), actor, r.PathValue("ref"), r.PathValue("staff")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *api) getReminders(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	rm, err := a.svc.GetReminders(r.Context(), r.PathValue("ref"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reminders": rm})
}

// putReminders sets {"before": ["24h", "2h"]}; an empty list turns
// reminders off.
func (a *api) putReminders(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b struct {
		Before []string `json:"before"`
	}
	if !decode(w, r, &b) {
		return
	}
	rm, err := a.svc.SetReminders(r.Context(), actor, r.PathValue("ref"), b.Before)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reminders": rm})
}
