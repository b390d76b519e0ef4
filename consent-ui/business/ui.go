// Package businessui serves the business console at /business
// (docs/reference.md §16): signed-in members of a business see its day and
// week, its bookings, and change its bookings, time off, hours, services,
// policies and staff. The pages work without JavaScript and carry the same
// security headers and CSRF protection as every page (consent-ui).
//
// Who may see what is internal/business's decision: a member reaches only
// its own business, staff only their own calendar, and everything else —
// another business, another staff member's booking, an owner's page asked
// for by staff — answers 404, the page of something that does not exist.
package businessui

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/callbacks"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Handler serves the console. Mount it at "/business" and "/business/".
type Handler struct {
	svc     *business.Service
	actions Actions
	inbox   *callbacks.Inbox
	// calendars: nil without a calendar service (no secret key).
	calendars Calendars
	ui        consent.UI
	log       *slog.Logger
	clock     store.Clock
	pages     map[string]*template.Template
	mux       *http.ServeMux
	static    http.Handler
}

var _ http.Handler = (*Handler)(nil)

// Config is what New needs.
type Config struct {
	Service *business.Service
	// Actions changes bookings (the mutation service's business channel).
	Actions Actions
	// Callbacks is the inbox of callback requests (nil: the Callbacks
	// page says there is none).
	Callbacks *callbacks.Inbox
	// Calendars are the staff members' connected calendars and the
	// business's reminders (admin.Service; nil: the Calendars page says
	// they need a secret key).
	Calendars Calendars
	// UI supplies the signed-in account, CSRF tokens, sign-in redirects
	// and error pages (consentui.UI does).
	UI     consent.UI
	Logger *slog.Logger
	Clock  store.Clock
}

// New returns the console's handler.
func New(c Config) (*Handler, error) {
	if c.Service == nil || c.UI == nil || c.Actions == nil {
		return nil, errors.New("businessui: a business service, booking actions and a consent UI are required")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = store.SystemClock
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, _ := fs.Sub(staticFS, "static")
	h := &Handler{svc: c.Service, actions: c.Actions, inbox: c.Callbacks, calendars: c.Calendars, ui: c.UI, log: c.Logger, clock: c.Clock, pages: pages, mux: http.NewServeMux(),
		static: http.StripPrefix("/business/static/", http.FileServerFS(static))}
	for _, rt := range Routes {
		h.mux.HandleFunc(rt.Method+" "+rt.Pattern, h.handlerOf(rt))
	}
	return h, nil
}

// Route is one console route: who may use it and what it does.
type Route struct {
	Method, Pattern string
	// Owner: only owners; staff get 404.
	Owner bool
	// NoBusiness: not under /business/{biz} (the chooser, joining).
	NoBusiness bool
	name       string
}

// Routes are every console route (the table test walks them all).
var Routes = []Route{
	{Method: "GET", Pattern: "/business", NoBusiness: true, name: "home"},
	{Method: "GET", Pattern: "/business/{$}", NoBusiness: true, name: "home"},
	{Method: "GET", Pattern: "/business/join", NoBusiness: true, name: "join"},
	{Method: "POST", Pattern: "/business/join", NoBusiness: true, name: "join-post"},
	{Method: "GET", Pattern: "/business/{biz}", name: "open"},
	{Method: "GET", Pattern: "/business/{biz}/day", name: "day"},
	{Method: "GET", Pattern: "/business/{biz}/week", name: "week"},
	{Method: "GET", Pattern: "/business/{biz}/bookings", name: "bookings"},
	{Method: "GET", Pattern: "/business/{biz}/bookings/{ref}", name: "booking"},
	{Method: "POST", Pattern: "/business/{biz}/bookings/{ref}", name: "booking-post"},
	{Method: "GET", Pattern: "/business/{biz}/time-off", name: "time-off"},
	{Method: "POST", Pattern: "/business/{biz}/time-off", name: "time-off-post"},
	{Method: "POST", Pattern: "/business/{biz}/time-off/{id}/remove", name: "time-off-remove"},
	{Method: "GET", Pattern: "/business/{biz}/callbacks", name: "callbacks"},
	{Method: "POST", Pattern: "/business/{biz}/callbacks/{ref}/done", name: "callback-done"},
	{Method: "GET", Pattern: "/business/{biz}/calendars", name: "calendars"},
	{Method: "POST", Pattern: "/business/{biz}/calendars/{staff}", name: "calendar-post"},
	{Method: "POST", Pattern: "/business/{biz}/calendars/{staff}/sync", name: "calendar-sync"},
	{Method: "POST", Pattern: "/business/{biz}/calendars/{staff}/disconnect", name: "calendar-disconnect"},
	{Method: "POST", Pattern: "/business/{biz}/reminders", Owner: true, name: "reminders-post"},
	{Method: "GET", Pattern: "/business/{biz}/settings", Owner: true, name: "settings"},
	{Method: "POST", Pattern: "/business/{biz}/hours", Owner: true, name: "hours-post"},
	{Method: "POST", Pattern: "/business/{biz}/services/{svc}", Owner: true, name: "service-post"},
	{Method: "POST", Pattern: "/business/{biz}/policies", Owner: true, name: "policies-post"},
	{Method: "GET", Pattern: "/business/{biz}/credentials", Owner: true, name: "credentials"},
	{Method: "POST", Pattern: "/business/{biz}/credentials", Owner: true, name: "credential-add"},
	{Method: "POST", Pattern: "/business/{biz}/credentials/{n}", Owner: true, name: "credential-edit"},
	{Method: "POST", Pattern: "/business/{biz}/credentials/{n}/remove", Owner: true, name: "credential-remove"},
	{Method: "GET", Pattern: "/business/{biz}/members", Owner: true, name: "members"},
	{Method: "POST", Pattern: "/business/{biz}/members/invite", Owner: true, name: "invite-post"},
	{Method: "POST", Pattern: "/business/{biz}/members/{account}/remove", Owner: true, name: "member-remove"},
}

var pageNames = []string{"home", "join", "day", "week", "bookings", "booking", "time_off", "settings", "credentials", "members", "orphans", "callbacks", "calendars"}

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"path": url.PathEscape, "money": money, "label": stateLabel, "lower": strings.ToLower, "amount": amount, "kind": kindLabel}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("businessui: parse %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// setSecurityHeaders matches every page's headers (consent-ui/security.go).
func setSecurityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w)
	if strings.HasPrefix(r.URL.Path, "/business/static/") && r.Method == http.MethodGet {
		h.serveStatic(w, r) // the console's style sheet, before any business route
		return
	}
	if _, pattern := h.mux.Handler(r); pattern == "" {
		if _, ok := h.signedIn(w, r); !ok {
			return
		}
		h.notFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	h.static.ServeHTTP(w, r)
}

func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request) (store.Account, bool) {
	w.Header().Set("Cache-Control", "no-store")
	acct, ok := h.ui.CurrentAccount(r)
	if !ok {
		next := r.URL.RequestURI()
		if r.Method != http.MethodGet {
			next = "/business"
		}
		h.ui.LoginRedirect(w, r, next)
		return store.Account{}, false
	}
	return acct, true
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.ui.RenderError(w, r, http.StatusNotFound, "Not found", business.ErrNotFound.Message)
}

// maxForm bounds a POST body.
const maxForm = 64 << 10

// page is one request's context for rendering.
type page struct {
	Account  store.Account
	M        business.Membership
	CSRF     string
	Field    string
	Title    string
	Nav      string
	Notice   string
	Problems []problem.Problem
	Data     any
}

type pageFunc func(w http.ResponseWriter, r *http.Request, p *page)

func (h *Handler) handlerOf(rt Route) http.HandlerFunc {
	fn := h.route(rt.name)
	return func(w http.ResponseWriter, r *http.Request) {
		acct, ok := h.signedIn(w, r)
		if !ok {
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			if !h.ui.VerifyCSRF(r) {
				h.ui.RenderError(w, r, http.StatusForbidden, "This form has expired",
					"Nothing was changed. Go back, reload the page and try again.")
				return
			}
			if f, c, bad := textcheck.Form(r.PostForm, "reason"); bad {
				h.ui.RenderError(w, r, http.StatusBadRequest, "This form contains a control character",
					fmt.Sprintf("Nothing was changed. The %q field contains the control character U+%04X; remove it and try again.", f, c))
				return
			}
		}
		p := &page{Account: acct, CSRF: h.ui.CSRFToken(w, r), Field: consent.CSRFField}
		if !rt.NoBusiness {
			m, err := h.svc.Open(r.Context(), acct.ID, r.PathValue("biz"))
			if err != nil {
				h.fail(w, r, err)
				return
			}
			if rt.Owner && !m.IsOwner() {
				h.notFound(w, r)
				return
			}
			p.M = m
		}
		fn(w, r, p)
	}
}

func (h *Handler) route(name string) pageFunc {
	switch name {
	case "home":
		return h.getHome
	case "join":
		return h.getJoin
	case "join-post":
		return h.postJoin
	case "open":
		return func(w http.ResponseWriter, r *http.Request, p *page) {
			http.Redirect(w, r, "/business/"+url.PathEscape(p.M.Business.Reference)+"/day", http.StatusSeeOther)
		}
	case "day":
		return h.getDay
	case "week":
		return h.getWeek
	case "bookings":
		return h.getBookings
	case "booking":
		return h.getBooking
	case "booking-post":
		return h.postBooking
	case "time-off":
		return h.getTimeOff
	case "time-off-post":
		return h.postTimeOff
	case "time-off-remove":
		return h.postTimeOffRemove
	case "callbacks":
		return h.getCallbacks
	case "callback-done":
		return h.postCallbackDone
	case "calendars":
		return h.getCalendars
	case "calendar-post":
		return h.postCalendar
	case "calendar-sync":
		return h.postCalendarSync
	case "calendar-disconnect":
		return h.postCalendarDisconnect
	case "reminders-post":
		return h.postReminders
	case "settings":
		return h.getSettings
	case "hours-post":
		return h.postHours
	case "service-post":
		return h.postService
	case "policies-post":
		return h.postPolicies
	case "credentials":
		return h.getCredentials
	case "credential-add":
		return h.postCredentialAdd
	case "credential-edit":
		return h.postCredentialEdit
	case "credential-remove":
		return h.postCredentialRemove
	case "members":
		return h.getMembers
	case "invite-post":
		return h.postInvite
	case "member-remove":
		return h.postMemberRemove
	}
	panic("businessui: no handler for route " + name)
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	var buf bytes.Buffer
	if err := h.pages[name].Execute(&buf, p); err != nil {
		h.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

func (h *Handler) serverError(w http.ResponseWriter, r *http.Request, err error) {
	h.log.ErrorContext(r.Context(), "business console", "method", r.Method, "path", r.URL.Path, "err", err)
	h.ui.RenderError(w, r, http.StatusInternalServerError, "Something went wrong",
		"Linkslot could not finish this request. Nothing was changed. Please try again in a moment.")
}

// fail shows an error that is not refused input.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := problem.As(err)
	switch {
	case errors.Is(err, business.ErrNotFound):
		h.notFound(w, r)
	case ok && e.Code != problem.CodeServerError:
		h.ui.RenderError(w, r, http.StatusConflict, "Not possible", e.Message)
	default:
		h.serverError(w, r, err)
	}
}

// base is the console's address of the member's business.
func (p *page) Base() string { return "/business/" + url.PathEscape(p.M.Business.Reference) }

func (h *Handler) now() time.Time { return h.clock() }

// redirect goes back to a console page with a fixed notice.
func redirect(w http.ResponseWriter, r *http.Request, to, done string) {
	if done != "" {
		sep := "?"
		if strings.Contains(to, "?") {
			sep = "&"
		}
		to += sep + "done=" + url.QueryEscape(done)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// notices are fixed texts chosen by a query parameter after a redirect.
var notices = map[string]string{
	"time-off":             "The time off is blocked: no new booking can take it.",
	"time-off-removed":     "The time off was removed: its time can be booked again.",
	"callback-done":        "The request is marked done. The person is told by e-mail.",
	"callback-gone":        "That request was already done, or is not this business's; nothing changed.",
	"hours":                "The opening hours were saved. The next availability answer uses them.",
	"calendar-synced":      "The calendar was synced. Availability uses its busy times now.",
	"calendar-sync-failed": "The sync failed: see the calendar's last error below.",
	"calendar-set":         "The calendar was saved and synced. Availability uses its busy times now.",
	"calendar-set-failed":  "The calendar was saved, but its first sync failed: see its last error below.",
	"calendar-removed":     "The calendar was disconnected: its busy times no longer block availability.",
	"calendar-gone":        "That calendar was already disconnected; nothing changed.",
	"reminders":            "The reminders were saved. Bookings changed from now on get them.",
	"service":              "The service was saved. Booked appointments keep their times.",
	"policies":             "The booking rules were saved.",
	"credential-added":     "The credential was added. Agents see it, marked as reported by the business, with today's date.",
	"credential-saved":     "The credential was saved. Agents see it, marked as reported by the business.",
	"credential-removed":   "The credential was removed. Agents no longer see it.",
	"invited":              "The invitation was e-mailed. It works once, for 7 days.",
	"member-removed":       "The staff member no longer has access to this console.",
	"joined":               "You joined the business. Its console is below.",
	"confirm":              "The booking is confirmed. The person is told.",
	"decline":              "The booking was declined. The person is told.",
	"complete":             "The booking is marked completed.",
	"no_show":              "The booking is marked as a no-show.",
	"cancel":               "The booking was cancelled. The person is told.",
}

func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

func problemsOf(err error) ([]problem.Problem, bool) {
	if e, ok := problem.As(err); ok && e.Code == problem.CodeInvalidInput && len(e.Problems) > 0 {
		return e.Problems, true
	}
	return nil, false
}

func money(cents int64, currency string) string { return amount(cents) + " " + currency }

func amount(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

var stateLabels = map[string]string{"pending": "Waiting for you", store.BookingConfirmed: "Confirmed", store.BookingCompleted: "Completed",
	"no_show": "No-show", "declined": "Declined", store.BookingCancelled: "Cancelled"}

var kindLabels = map[string]string{store.CredentialLicense: "License", store.CredentialInsurance: "Insurance",
	store.CredentialCertification: "Certification"}

func kindLabel(k string) string {
	if l, ok := kindLabels[k]; ok {
		return l
	}
	return k
}

func stateLabel(s string) string {
	if l, ok := stateLabels[s]; ok {
		return l
	}
	return s
}
