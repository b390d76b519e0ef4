package adminui

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
	"unicode"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Handler serves the admin pages. Mount it at "/admin" and "/admin/"
// (the JSON API's longer "/admin/api/" pattern takes precedence).
type Handler struct {
	svc    *admin.Service
	ui     consent.UI
	log    *slog.Logger
	pages  map[string]*template.Template
	mux    *http.ServeMux
	static http.Handler
}

var _ http.Handler = (*Handler)(nil)

// New returns the admin pages handler. ui supplies the signed-in account,
// CSRF tokens, sign-in redirects and error pages (consentui.UI does).
func New(svc *admin.Service, ui consent.UI, log *slog.Logger) (*Handler, error) {
	if svc == nil || ui == nil {
		return nil, errors.New("adminui: a service and a consent UI are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, _ := fs.Sub(staticFS, "static")
	h := &Handler{svc: svc, ui: ui, log: log, pages: pages, mux: http.NewServeMux(),
		static: http.StripPrefix("/admin/static/", http.FileServerFS(static))}
	m := h.mux
	m.HandleFunc("GET /admin", h.redirectHome)
	m.HandleFunc("GET /admin/{$}", h.redirectHome)
	m.HandleFunc("GET /admin/clients", h.admin(h.getClients))
	m.HandleFunc("GET /admin/clients/new", h.admin(h.getNewClient))
	m.HandleFunc("POST /admin/clients", h.admin(h.postNewClient))
	m.HandleFunc("POST /admin/clients/register-url", h.admin(h.postRegisterURL))
	m.HandleFunc("GET /admin/clients/{id}", h.admin(h.getClient))
	m.HandleFunc("POST /admin/clients/{id}", h.admin(h.postClient))
	m.HandleFunc("POST /admin/clients/{id}/disable", h.admin(h.postDisable))
	m.HandleFunc("POST /admin/clients/{id}/enable", h.admin(h.postEnable))
	m.HandleFunc("POST /admin/clients/{id}/rotate-secret", h.admin(h.postRotate))
	m.HandleFunc("POST /admin/clients/{id}/delete", h.admin(h.postDelete))
	m.HandleFunc("GET /admin/businesses", h.admin(h.getBusinesses))
	m.HandleFunc("POST /admin/businesses/{ref}/agent-booking", h.admin(h.postAgentBooking))
	m.HandleFunc("GET /admin/businesses/{ref}/members", h.admin(h.getMembers))
	m.HandleFunc("POST /admin/businesses/{ref}/members", h.admin(h.postMember))
	m.HandleFunc("POST /admin/businesses/{ref}/members/remove", h.admin(h.postMemberRemove))
	m.HandleFunc("GET /admin/catalog", h.admin(h.getCatalog))
	m.HandleFunc("POST /admin/catalog", h.admin(h.postCatalog))
	m.HandleFunc("GET /admin/catalog/export", h.admin(h.getCatalogExport))
	m.HandleFunc("GET /admin/audit", h.admin(h.getAudit))
	m.HandleFunc("GET /admin/users", h.admin(h.getUsers))
	m.HandleFunc("GET /admin/users/{email}", h.admin(h.getUser))
	m.HandleFunc("POST /admin/users/{email}/disable", h.admin(h.postUserDisable))
	m.HandleFunc("POST /admin/users/{email}/enable", h.admin(h.postUserEnable))
	m.HandleFunc("GET /admin/webhooks", h.admin(h.getWebhooks))
	m.HandleFunc("POST /admin/webhooks", h.admin(h.postNewWebhook))
	m.HandleFunc("GET /admin/webhooks/{id}", h.admin(h.getWebhook))
	m.HandleFunc("POST /admin/webhooks/{id}/{action}", h.admin(h.postWebhookAction))
	m.HandleFunc("POST /admin/deliveries/{id}/replay", h.admin(h.postReplay))
	m.HandleFunc("GET /admin/static/", h.serveStatic)
	return h, nil
}

var pageNames = []string{"clients", "client_form", "client_secret", "businesses", "catalog", "audit", "users", "user",
	"webhooks", "webhook", "webhook_secret", "members"}

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"path": url.PathEscape, "checked": checked}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("adminui: parse %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// setSecurityHeaders matches the consent pages' headers.
func setSecurityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w)
	if _, pattern := h.mux.Handler(r); pattern == "" {
		// Unknown page or method: still admin-only, so nobody probes paths.
		if _, ok := h.authorize(w, r); !ok {
			return
		}
		h.ui.RenderError(w, r, http.StatusNotFound, "Page not found", "There is no such administration page.")
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

func (h *Handler) redirectHome(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/admin/clients", http.StatusSeeOther)
}

// authorize lets administrators through: nobody signed in is sent to sign
// in, a signed-in non-administrator gets 403.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) (store.Account, bool) {
	w.Header().Set("Cache-Control", "no-store")
	acct, ok := h.ui.CurrentAccount(r)
	if !ok {
		next := r.URL.RequestURI()
		if r.Method != http.MethodGet {
			next = "/admin"
		}
		h.ui.LoginRedirect(w, r, next)
		return store.Account{}, false
	}
	if !admin.IsAdmin(acct) {
		h.ui.RenderError(w, r, http.StatusForbidden, "Administrators only",
			"This page is for Linkslot administrators. Your account does not have the administrator role.")
		return store.Account{}, false
	}
	return acct, true
}

// multilineFields are the form fields that may carry tabs and line breaks.
var multilineFields = []string{"redirect_uris", "content"}

// maxForm bounds a POST body: a catalog file plus the form around it.
const maxForm = catalogfile.MaxFileBytes + 64<<10

type pageFunc func(w http.ResponseWriter, r *http.Request, p *page)

// page is one request's context for rendering.
type page struct {
	Account store.Account
	Actor   admin.Actor
	CSRF    string
	Field   string
	Title   string
	Nav     string
	Notice  string
	// Problems lists what was refused, shown above the page.
	Problems []admin.Problem
	Warnings []admin.Problem // a catalog import's: done, but worth fixing
	Data     any
}

func (h *Handler) admin(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		acct, ok := h.authorize(w, r)
		if !ok {
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		}
		if r.Method == http.MethodPost && !h.ui.VerifyCSRF(r) {
			h.ui.RenderError(w, r, http.StatusForbidden, "This form has expired",
				"Nothing was changed. Go back, reload the page and try again.")
			return
		}
		if r.Method == http.MethodPost {
			// U+0000 and other control characters (PostgreSQL cannot
			// store NUL in text; SQLite can): refused for every form.
			if f, c, bad := textcheck.Form(r.PostForm, multilineFields...); bad {
				h.ui.RenderError(w, r, http.StatusBadRequest, "This form contains a control character",
					fmt.Sprintf("Nothing was changed. The %q field contains the control character U+%04X; remove it and try again.", f, c))
				return
			}
		}
		p := &page{Account: acct, Actor: admin.Actor{ID: acct.ID, RequestID: requestid.From(r.Context())},
			CSRF: h.ui.CSRFToken(w, r), Field: consent.CSRFField}
		fn(w, r, p)
	}
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
	h.log.ErrorContext(r.Context(), "admin page", "method", r.Method, "path", r.URL.Path, "err", err)
	h.ui.RenderError(w, r, http.StatusInternalServerError, "Something went wrong",
		"Linkslot could not finish this request. Nothing was changed. Please try again in a moment.")
}

// fail shows a service error: refused input on the page it came from is
// handled by callers; here not found, conflicts and the rest.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, admin.ErrNotFound):
		h.ui.RenderError(w, r, http.StatusNotFound, "Not found", "It may have been deleted by another administrator.")
	case errors.Is(err, admin.ErrConflict), errors.Is(err, admin.ErrAlreadyExists):
		e, _ := problem.As(err)
		h.ui.RenderError(w, r, http.StatusConflict, "Not possible", asSentence(e.Message))
	default:
		h.serverError(w, r, err)
	}
}

// notices are fixed texts chosen by a query parameter after a redirect, so
// no request text is ever echoed.
var notices = map[string]string{
	"disabled":   "The client is disabled. Its new sign-ins are refused now and its access tokens within seconds.",
	"enabled":    "The client is enabled again.",
	"updated":    "The client's registration was saved.",
	"registered": "The app was registered by its client ID URL; its document was fetched and checked.",
	"deleted":    "The client was deleted, with its links and tokens.",
	"agent-on":   "Agent booking is on: agents can find and book this business.",
	"imported":   "The catalog was imported.",
	"agent-off":  "Agent booking is off: agents can no longer find or book this business.",
	"user-disabled": "The account is disabled: it was signed out everywhere, its apps were disconnected, " +
		"and their access tokens stop working within seconds.",
	"user-enabled": "The account is enabled again. Its apps must be connected again.",

	"webhook-disabled": "The endpoint is disabled: it gets no new events, and its pending deliveries fail (they can be replayed).",
	"webhook-enabled":  "The endpoint is enabled again.",
	"webhook-deleted":  "The endpoint was deleted, with its delivery log.",
	"replayed":         "The delivery is queued again with its original id; it goes out within seconds.",
	"member-added":     "The owner was added: they can open the business console now.",
	"member-removed":   "The member was removed: they can no longer open this business's console.",
}

func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

func problemsOf(err error) ([]admin.Problem, bool) {
	if ps, ok := admin.ProblemsOf(err); ok {
		return ps, true
	}
	if e, ok := problem.As(err); ok && errors.Is(err, admin.ErrAlreadyExists) {
		return []admin.Problem{{Path: e.Field, Message: e.Message}}, true
	}
	return nil, false
}

// asSentence makes a sentence for the page of an admin service message,
// which is written as a clause for the command line and the JSON API
// ("client \"x\" is public and has no secret").
func asSentence(clause string) string {
	clause = strings.TrimSpace(clause)
	if clause == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(clause)
	clause = string(unicode.ToUpper(r)) + clause[n:]
	if !strings.HasSuffix(clause, ".") && !strings.HasSuffix(clause, "!") && !strings.HasSuffix(clause, "?") {
		clause += "."
	}
	return clause
}
