package businessui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Action is one change of a booking asked for on its page: the action, the
// version of the booking the form showed, and the form's idempotency key.
type Action struct {
	BookingRef     string
	Action         string // confirm, decline, complete, no_show, cancel
	Reason         string
	Version        int
	IdempotencyKey string
}

// Actions changes bookings for members, through the mutation service's
// business channel (docs/reference.md §16): the person is notified and
// Activity records who did it. A form whose version is not the booking's
// current one answers problem.CodeBookingChanged and changes nothing.
type Actions interface {
	Act(ctx context.Context, m business.Membership, a Action) error
}

// ---- choosing a business, joining one ----

func (h *Handler) getHome(w http.ResponseWriter, r *http.Request, p *page) {
	ms, err := h.svc.Memberships(r.Context(), p.Account.ID)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	if len(ms) == 1 {
		http.Redirect(w, r, "/business/"+url.PathEscape(ms[0].Business.Reference)+"/day", http.StatusSeeOther)
		return
	}
	p.Title, p.Data = "Your businesses", ms
	h.render(w, r, http.StatusOK, "home", p)
}

func (h *Handler) getJoin(w http.ResponseWriter, r *http.Request, p *page) {
	p.Title, p.Data = "Join a business", r.URL.Query().Get("token")
	h.render(w, r, http.StatusOK, "join", p)
}

func (h *Handler) postJoin(w http.ResponseWriter, r *http.Request, p *page) {
	m, err := h.svc.AcceptInvitation(r.Context(), p.Account.ID, r.PostFormValue("token"))
	if err != nil {
		if errors.Is(err, business.ErrInvitation) || errors.Is(err, business.ErrAlreadyMember) {
			e, _ := problem.As(err)
			p.Title, p.Problems = "Join a business", []problem.Problem{{Message: e.Message}}
			h.render(w, r, http.StatusBadRequest, "join", p)
			return
		}
		h.fail(w, r, err)
		return
	}
	ms, err := h.svc.Memberships(r.Context(), p.Account.ID)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	for _, x := range ms {
		if x.BusinessID == m.BusinessID {
			redirect(w, r, "/business/"+url.PathEscape(x.Business.Reference)+"/day", "joined")
			return
		}
	}
	redirect(w, r, "/business", "joined")
}

// ---- the day and the week ----

// entry is one thing on a calendar: a booking or a time off.
type entry struct {
	Start, End time.Time
	Booking    *business.BookingRow
	Off        *store.TimeOff
}

type column struct {
	Staff   store.Staff
	Date    time.Time
	Hours   string // the day's working hours, as text
	Entries []entry
}

type calendarData struct {
	Date       time.Time
	Prev, Next string
	Staff      []store.Staff
	StaffID    string
	Columns    []column
	Today      string
	DateValue  string
	WeekOf     string
}

// localDate parses a YYYY-MM-DD date in loc (empty or invalid: today).
func localDate(s string, now time.Time, loc *time.Location) time.Time {
	if d, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return d
	}
	n := now.In(loc)
	return time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
}

func hoursText(ws []store.HoursWindow, wd time.Weekday) string {
	var parts []string
	for _, w := range ws {
		if w.Weekday == wd {
			parts = append(parts, fmt.Sprintf("%02d:%02d–%02d:%02d", w.StartMin/60, w.StartMin%60, w.EndMin/60, w.EndMin%60))
		}
	}
	if len(parts) == 0 {
		return "Not working"
	}
	return strings.Join(parts, ", ")
}

// calendar reads the bookings and time off of days days from first for
// the staff the member may see (or the one chosen).
func (h *Handler) calendar(w http.ResponseWriter, r *http.Request, p *page, days int, oneStaff bool) (calendarData, bool) {
	loc := business.Location(p.M.Business)
	q := r.URL.Query()
	first := localDate(q.Get("date"), h.now(), loc)
	if days == 7 {
		first = first.AddDate(0, 0, -((int(first.Weekday()) + 6) % 7)) // Monday
	}
	last := first.AddDate(0, 0, days-1)
	staffID := q.Get("staff")
	rows, cat, err := h.svc.Bookings(r.Context(), p.M, business.Filter{From: first, To: last, StaffID: staffID})
	if err != nil {
		h.fail(w, r, err)
		return calendarData{}, false
	}
	d := calendarData{Date: first, Staff: cat.Staff, StaffID: staffID, DateValue: first.Format("2006-01-02"),
		Prev: first.AddDate(0, 0, -days).Format("2006-01-02"), Next: first.AddDate(0, 0, days).Format("2006-01-02"),
		Today: localDate("", h.now(), loc).Format("2006-01-02")}
	staff := cat.Staff
	if staffID != "" || oneStaff {
		if staffID == "" && len(staff) > 0 {
			staffID, d.StaffID = staff[0].ID, staff[0].ID
		}
		for _, st := range cat.Staff {
			if st.ID == staffID {
				staff = []store.Staff{st}
			}
		}
	}
	for _, st := range staff {
		for i := 0; i < days; i++ {
			day := first.AddDate(0, 0, i)
			next := day.AddDate(0, 0, 1)
			col := column{Staff: st, Date: day, Hours: hoursText(cat.StaffHours[st.ID], day.Weekday())}
			if hoursText(cat.OpeningHours, day.Weekday()) == "Not working" {
				col.Hours = "Closed"
			}
			for i := range rows {
				b := &rows[i]
				if b.StaffID == st.ID && !b.StartsAt.Before(day) && b.StartsAt.Before(next) {
					col.Entries = append(col.Entries, entry{Start: b.StartsAt, End: b.EndsAt, Booking: b})
				}
			}
			for _, o := range cat.StaffTimeOff[st.ID] {
				if o.StartsAt.Before(next) && day.Before(o.EndsAt) {
					o := o
					col.Entries = append(col.Entries, entry{Start: o.StartsAt.In(loc), End: o.EndsAt.In(loc), Off: &o})
				}
			}
			sort.SliceStable(col.Entries, func(a, b int) bool { return col.Entries[a].Start.Before(col.Entries[b].Start) })
			d.Columns = append(d.Columns, col)
		}
	}
	return d, true
}

func (h *Handler) getDay(w http.ResponseWriter, r *http.Request, p *page) {
	d, ok := h.calendar(w, r, p, 1, false)
	if !ok {
		return
	}
	p.Title, p.Nav, p.Data, p.Notice = "Day", "day", d, notice(r)
	h.render(w, r, http.StatusOK, "day", p)
}

func (h *Handler) getWeek(w http.ResponseWriter, r *http.Request, p *page) {
	d, ok := h.calendar(w, r, p, 7, true)
	if !ok {
		return
	}
	p.Title, p.Nav, p.Data = "Week", "week", d
	h.render(w, r, http.StatusOK, "week", p)
}

// ---- the bookings list and one booking ----

type listData struct {
	Rows                     []business.BookingRow
	Staff                    []store.Staff
	Statuses                 []string
	State, StaffID, From, To string
}

func (h *Handler) getBookings(w http.ResponseWriter, r *http.Request, p *page) {
	loc := business.Location(p.M.Business)
	q := r.URL.Query()
	today := localDate("", h.now(), loc)
	from, to := today, today.AddDate(0, 0, 13)
	var ps []problem.Problem
	if s := q.Get("from"); s != "" {
		if d, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
			from = d
		} else {
			ps = append(ps, problem.Problem{Path: "from", Message: "Give the first day as a date."})
		}
	}
	if s := q.Get("to"); s != "" {
		if d, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
			to = d
		} else {
			ps = append(ps, problem.Problem{Path: "to", Message: "Give the last day as a date."})
		}
	}
	d := listData{Statuses: business.Statuses, State: q.Get("state"), StaffID: q.Get("staff"),
		From: from.Format("2006-01-02"), To: to.Format("2006-01-02")}
	p.Title, p.Nav = "Bookings", "bookings"
	if len(ps) == 0 {
		rows, cat, err := h.svc.Bookings(r.Context(), p.M, business.Filter{From: from, To: to, StaffID: d.StaffID, Status: d.State})
		d.Rows, d.Staff = rows, cat.Staff
		if err != nil {
			var ok bool
			if ps, ok = problemsOf(err); !ok {
				h.fail(w, r, err)
				return
			}
		}
	}
	if d.Staff == nil {
		cat, err := h.svc.Catalog(r.Context(), p.M)
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		d.Staff = cat.Staff
	}
	p.Data, p.Problems = d, ps
	status := http.StatusOK
	if len(ps) > 0 {
		status = http.StatusBadRequest
	}
	h.render(w, r, status, "bookings", p)
}

type bookingData struct {
	B       business.BookingDetail
	Key     string // the idempotency key of this page's forms
	Actions []string
	Past    bool
	Reason  string
}

// actionsFor are the actions a booking's state allows.
func actionsFor(b business.BookingRow, now time.Time) []string {
	switch b.Status {
	case "pending":
		return []string{"confirm", "decline"}
	case store.BookingConfirmed:
		if b.StartsAt.Before(now) {
			return []string{"complete", "no_show"}
		}
		return []string{"cancel"}
	}
	return nil
}

func (h *Handler) getBooking(w http.ResponseWriter, r *http.Request, p *page) {
	h.showBooking(w, r, p, http.StatusOK, "")
}

func (h *Handler) showBooking(w http.ResponseWriter, r *http.Request, p *page, status int, reason string) {
	b, err := h.svc.Booking(r.Context(), p.M, r.PathValue("ref"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	p.Title, p.Nav = "Booking "+b.Reference, "bookings"
	if p.Notice == "" {
		p.Notice = notice(r)
	}
	p.Data = bookingData{B: b, Key: store.RandomString(16), Actions: actionsFor(b.BookingRow, now), Past: b.StartsAt.Before(now), Reason: reason}
	h.render(w, r, status, "booking", p)
}

func (h *Handler) postBooking(w http.ResponseWriter, r *http.Request, p *page) {
	ref := r.PathValue("ref")
	// The booking must be the member's to reach before anything is tried.
	if _, err := h.svc.Booking(r.Context(), p.M, ref); err != nil {
		h.fail(w, r, err)
		return
	}
	action := r.PostFormValue("action")
	version, err := strconv.Atoi(r.PostFormValue("version"))
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	var ps []problem.Problem
	if _, ok := notices[action]; !ok || !isAction(action) {
		ps = append(ps, problem.Problem{Path: "action", Message: "Choose one of the buttons."})
	}
	if err != nil || version < 1 {
		ps = append(ps, problem.Problem{Path: "version", Message: "This form is incomplete: reload the page and try again."})
	}
	if action == "cancel" && reason == "" {
		ps = append(ps, problem.Problem{Path: "reason", Message: "Give the person a reason for the cancellation."})
	}
	if len([]rune(reason)) > 500 {
		ps = append(ps, problem.Problem{Path: "reason", Message: "Use at most 500 characters."})
	}
	if len(ps) == 0 {
		err = h.actions.Act(r.Context(), p.M, Action{BookingRef: ref, Action: action, Reason: reason, Version: version,
			IdempotencyKey: r.PostFormValue("idempotency_key")})
		if err == nil {
			redirect(w, r, p.Base()+"/bookings/"+url.PathEscape(ref), action)
			return
		}
		if errors.Is(err, problem.New(problem.CodeBookingChanged, "")) {
			ps = []problem.Problem{{Message: "Someone else changed this booking after this page was shown. Nothing was changed: " +
				"here it is as it is now; try again if it still applies."}}
		} else if e, ok := problem.As(err); ok && e.Code != problem.CodeServerError && !errors.Is(err, business.ErrNotFound) {
			ps = []problem.Problem{{Path: e.Field, Message: e.Message}}
		} else {
			h.fail(w, r, err)
			return
		}
	}
	p.Problems = ps
	h.showBooking(w, r, p, http.StatusConflict, reason)
}

func isAction(a string) bool {
	switch a {
	case "confirm", "decline", "complete", "no_show", "cancel":
		return true
	}
	return false
}

// ---- time off ----

type timeOffData struct {
	Staff []store.Staff
	Offs  []offRow
	Form  map[string]string
}

type offRow struct {
	store.TimeOff
	StaffName string
}

func (h *Handler) getTimeOff(w http.ResponseWriter, r *http.Request, p *page) {
	h.showTimeOff(w, r, p, http.StatusOK, nil)
}

func (h *Handler) showTimeOff(w http.ResponseWriter, r *http.Request, p *page, status int, form map[string]string) {
	cat, err := h.svc.Catalog(r.Context(), p.M)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	loc := business.Location(cat.Business)
	now := h.now()
	d := timeOffData{Staff: cat.Staff, Form: form}
	for _, st := range cat.Staff {
		for _, o := range cat.StaffTimeOff[st.ID] {
			if o.EndsAt.After(now) {
				o.StartsAt, o.EndsAt = o.StartsAt.In(loc), o.EndsAt.In(loc)
				d.Offs = append(d.Offs, offRow{TimeOff: o, StaffName: st.Name})
			}
		}
	}
	sort.Slice(d.Offs, func(i, j int) bool { return d.Offs[i].StartsAt.Before(d.Offs[j].StartsAt) })
	if d.Form == nil {
		today := localDate("", now, loc).Format("2006-01-02")
		d.Form = map[string]string{"from_date": today, "to_date": today, "from_time": "12:00", "to_time": "13:00"}
	}
	p.Title, p.Nav, p.Data = "Time off", "time-off", d
	if p.Notice == "" {
		p.Notice = notice(r)
	}
	h.render(w, r, status, "time_off", p)
}

func (h *Handler) postTimeOff(w http.ResponseWriter, r *http.Request, p *page) {
	loc := business.Location(p.M.Business)
	form := map[string]string{}
	for _, k := range []string{"staff", "from_date", "from_time", "to_date", "to_time", "reason"} {
		form[k] = strings.TrimSpace(r.PostFormValue(k))
	}
	staffID := form["staff"]
	if !p.M.IsOwner() {
		if staffID != "" && staffID != p.M.StaffID {
			h.notFound(w, r)
			return
		}
		staffID = p.M.StaffID
	}
	var ps []problem.Problem
	at := func(dk, tk, what string) time.Time {
		t, err := time.ParseInLocation("2006-01-02 15:04", form[dk]+" "+form[tk], loc)
		if err != nil {
			ps = append(ps, problem.Problem{Path: dk, Message: "Give the " + what + " as a date and a time."})
		}
		return t
	}
	from, to := at("from_date", "from_time", "start"), at("to_date", "to_time", "end")
	if staffID == "" {
		ps = append(ps, problem.Problem{Path: "staff", Message: "Choose whose time off this is."})
	}
	if len(ps) == 0 {
		_, err := h.svc.AddTimeOff(r.Context(), p.M, staffID, from, to, form["reason"])
		if err == nil {
			redirect(w, r, p.Base()+"/time-off", "time-off")
			return
		}
		var ok bool
		if ps, ok = problemsOf(err); !ok {
			h.fail(w, r, err)
			return
		}
	}
	p.Problems = ps
	h.showTimeOff(w, r, p, http.StatusBadRequest, form)
}

func (h *Handler) postTimeOffRemove(w http.ResponseWriter, r *http.Request, p *page) {
	if err := h.svc.RemoveTimeOff(r.Context(), p.M, r.PathValue("id")); err != nil {
		h.fail(w, r, err)
		return
	}
	redirect(w, r, p.Base()+"/time-off", "time-off-removed")
}

// ---- settings: hours, services, policies ----

type dayHours struct {
	Weekday                      time.Weekday
	Open1, Close1, Open2, Close2 string
}

type settingsData struct {
	Days     []dayHours
	Services []store.Service
	B        store.Business
}

// week is Monday first.
var week = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

func clock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

func daysOf(ws []store.HoursWindow) []dayHours {
	out := make([]dayHours, 0, 7)
	for _, wd := range week {
		d := dayHours{Weekday: wd}
		n := 0
		for _, w := range ws {
			if w.Weekday != wd {
				continue
			}
			if n == 0 {
				d.Open1, d.Close1 = clock(w.StartMin), clock(w.EndMin)
			} else if n == 1 {
				d.Open2, d.Close2 = clock(w.StartMin), clock(w.EndMin)
			}
			n++
		}
		out = append(out, d)
	}
	return out
}

func (h *Handler) getSettings(w http.ResponseWriter, r *http.Request, p *page) {
	h.showSettings(w, r, p, http.StatusOK, nil)
}

func (h *Handler) showSettings(w http.ResponseWriter, r *http.Request, p *page, status int, days []dayHours) {
	cat, err := h.svc.Catalog(r.Context(), p.M)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	if days == nil {
		days = daysOf(cat.OpeningHours)
	}
	p.Title, p.Nav, p.Data = "Settings", "settings", settingsData{Days: days, Services: cat.Services, B: cat.Business}
	if p.Notice == "" {
		p.Notice = notice(r)
	}
	h.render(w, r, status, "settings", p)
}

// minuteOf parses HH:MM (24:00 allowed as the end of a day).
func minuteOf(s string) (int, bool) {
	if s == "24:00" {
		return 1440, true
	}
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

func (h *Handler) postHours(w http.ResponseWriter, r *http.Request, p *page) {
	var hours []store.HoursWindow
	var ps []problem.Problem
	days := make([]dayHours, 0, 7)
	for _, wd := range week {
		k := strings.ToLower(wd.String()[:3])
		d := dayHours{Weekday: wd, Open1: r.PostFormValue(k + "_open1"), Close1: r.PostFormValue(k + "_close1"),
			Open2: r.PostFormValue(k + "_open2"), Close2: r.PostFormValue(k + "_close2")}
		days = append(days, d)
		for i, pair := range [][2]string{{d.Open1, d.Close1}, {d.Open2, d.Close2}} {
			if pair[0] == "" && pair[1] == "" {
				continue
			}
			a, ok1 := minuteOf(pair[0])
			b, ok2 := minuteOf(pair[1])
			if !ok1 || !ok2 {
				ps = append(ps, problem.Problem{Path: fmt.Sprintf("%s_open%d", k, i+1),
					Message: fmt.Sprintf("On %s give both the opening and the closing time, or neither.", wd)})
				continue
			}
			hours = append(hours, store.HoursWindow{Weekday: wd, StartMin: a, EndMin: b})
		}
	}
	if len(ps) == 0 {
		err := h.svc.SetHours(r.Context(), p.M, hours, r.PostFormValue("confirm") == "yes")
		if err == nil {
			redirect(w, r, p.Base()+"/settings", "hours")
			return
		}
		if e, ok := problem.As(err); ok && e.Code == business.ErrOrphans.Code {
			p.Title, p.Nav, p.Problems = "Confirm the new hours", "settings", nil
			p.Data = map[string]any{"Orphans": e.Problems, "Days": days, "Message": e.Message}
			h.render(w, r, http.StatusConflict, "orphans", p)
			return
		}
		var ok bool
		if ps, ok = problemsOf(err); !ok {
			h.fail(w, r, err)
			return
		}
	}
	p.Problems = ps
	h.showSettings(w, r, p, http.StatusBadRequest, days)
}

// cents parses a price such as "35", "35.5" or "35.50".
func cents(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 {
		return 0, false
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || w < 0 || w > 1e10 {
		return 0, false
	}
	return w*100 + f, true
}

func (h *Handler) postService(w http.ResponseWriter, r *http.Request, p *page) {
	var ps []problem.Problem
	num := func(k, msg string) int {
		n, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue(k)))
		if err != nil {
			ps = append(ps, problem.Problem{Path: k, Message: msg})
		}
		return n
	}
	e := business.ServiceEdit{DurationMinutes: num("duration_minutes", "Give the duration in minutes."),
		BufferBeforeMinutes:  num("buffer_before_minutes", "Give the minutes before, 0 for none."),
		BufferAfterMinutes:   num("buffer_after_minutes", "Give the minutes after, 0 for none."),
		RequiresConfirmation: r.PostFormValue("requires_confirmation") == "on"}
	price, ok := cents(r.PostFormValue("price"))
	if !ok {
		ps = append(ps, problem.Problem{Path: "price", Message: "Give the price as a number, such as 35 or 35.50."})
	}
	e.PriceCents = price
	if len(ps) == 0 {
		err := h.svc.UpdateService(r.Context(), p.M, r.PathValue("svc"), e)
		if err == nil {
			redirect(w, r, p.Base()+"/settings", "service")
			return
		}
		if ps, ok = problemsOf(err); !ok {
			h.fail(w, r, err)
			return
		}
	}
	p.Problems = ps
	h.showSettings(w, r, p, http.StatusBadRequest, nil)
}

func (h *Handler) postPolicies(w http.ResponseWriter, r *http.Request, p *page) {
	var ps []problem.Problem
	num := func(k string) int {
		n, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue(k)))
		if err != nil {
			ps = append(ps, problem.Problem{Path: k, Message: "Give a whole number."})
		}
		return n
	}
	pol := business.Policies{MinNoticeMinutes: num("min_notice_minutes"), HorizonDays: num("horizon_days"),
		CancellationWindowMinutes: num("cancellation_window_minutes"), AgentBooking: r.PostFormValue("agent_booking") == "on"}
	fee, ok := cents(r.PostFormValue("cancellation_fee"))
	if !ok {
		ps = append(ps, problem.Problem{Path: "cancellation_fee", Message: "Give the fee as a number, such as 0 or 10.50."})
	}
	pol.CancellationFeeCents = fee
	if len(ps) == 0 {
		err := h.svc.SetPolicies(r.Context(), p.M, pol)
		if err == nil {
			redirect(w, r, p.Base()+"/settings", "policies")
			return
		}
		if ps, ok = problemsOf(err); !ok {
			h.fail(w, r, err)
			return
		}
	}
	p.Problems = ps
	h.showSettings(w, r, p, http.StatusBadRequest, nil)
}

// ---- members ----

type membersData struct {
	Members []memberRow
	Staff   []store.Staff
	Email   string
}

type memberRow struct {
	store.Member
	StaffName string
}

func (h *Handler) getMembers(w http.ResponseWriter, r *http.Request, p *page) {
	h.showMembers(w, r, p, http.StatusOK, "")
}

func (h *Handler) showMembers(w http.ResponseWriter, r *http.Request, p *page, status int, email string) {
	ms, err := h.svc.Members(r.Context(), p.M)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cat, err := h.svc.Catalog(r.Context(), p.M)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	d := membersData{Staff: cat.Staff, Email: email}
	for _, m := range ms {
		row := memberRow{Member: m}
		for _, st := range cat.Staff {
			if st.ID == m.StaffID {
				row.StaffName = st.Name
			}
		}
		d.Members = append(d.Members, row)
	}
	p.Title, p.Nav, p.Data = "Members", "members", d
	if p.Notice == "" {
		p.Notice = notice(r)
	}
	h.render(w, r, status, "members", p)
}

func (h *Handler) postInvite(w http.ResponseWriter, r *http.Request, p *page) {
	email := strings.TrimSpace(r.PostFormValue("email"))
	err := h.svc.InviteStaff(r.Context(), p.M, email, r.PostFormValue("staff"))
	if err == nil {
		redirect(w, r, p.Base()+"/members", "invited")
		return
	}
	ps, ok := problemsOf(err)
	if !ok {
		if e, isProblem := problem.As(err); isProblem && !errors.Is(err, business.ErrNotFound) && e.Code != problem.CodeServerError {
			ps = []problem.Problem{{Message: e.Message}}
		} else {
			h.fail(w, r, err)
			return
		}
	}
	p.Problems = ps
	h.showMembers(w, r, p, http.StatusBadRequest, email)
}

func (h *Handler) postMemberRemove(w http.ResponseWriter, r *http.Request, p *page) {
	if err := h.svc.RemoveStaffMember(r.Context(), p.M, r.PathValue("account")); err != nil {
		h.fail(w, r, err)
		return
	}
	redirect(w, r, p.Base()+"/members", "member-removed")
}
