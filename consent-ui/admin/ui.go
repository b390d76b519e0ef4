package adminui

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/scope"
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
	"webhooks", "webhook", "webhook_secret"}

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
}

func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

// ---- clients ----

func (h *Handler) getClients(w http.ResponseWriter, r *http.Request, p *page) {
	cs, err := h.svc.ListClients(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p.Title, p.Nav, p.Data, p.Notice = "Clients", "clients", cs, notice(r)
	h.render(w, r, http.StatusOK, "clients", p)
}

type scopeOption struct {
	Name, Description string
	Allowed, Default  bool
}

type grantOption struct {
	Name    string
	Checked bool
}

type clientForm struct {
	New          bool
	Disabled     bool
	Form         admin.ClientInfo
	RedirectText string
	Scopes       []scopeOption
	Grants       []grantOption
}

func formData(isNew bool, c admin.ClientInfo) clientForm {
	f := clientForm{New: isNew, Disabled: c.Disabled, Form: c, RedirectText: strings.Join(c.RedirectURIs, "\n")}
	known := map[string]bool{}
	for _, s := range scope.All() {
		known[s.Name] = true
		f.Scopes = append(f.Scopes, scopeOption{Name: s.Name, Description: s.Description,
			Allowed: slices.Contains(c.AllowedScopes, s.Name), Default: slices.Contains(c.DefaultScopes, s.Name)})
	}
	for _, g := range admin.DefaultGrantTypes {
		f.Grants = append(f.Grants, grantOption{Name: g, Checked: slices.Contains(c.GrantTypes, g)})
	}
	return f
}

func (h *Handler) getNewClient(w http.ResponseWriter, r *http.Request, p *page) {
	c := admin.ClientInfo{Public: true, AllowedScopes: []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite},
		DefaultScopes: []string{scope.BookingsRead, scope.BookingsWrite}, GrantTypes: admin.DefaultGrantTypes}
	p.Title, p.Nav, p.Data = "Register a client", "clients", formData(true, c)
	h.render(w, r, http.StatusOK, "client_form", p)
}

// readForm reads the client fields of a form.
func readForm(r *http.Request) admin.ClientInfo {
	lines := strings.FieldsFunc(r.PostFormValue("redirect_uris"), func(c rune) bool { return c == '\n' || c == '\r' })
	return admin.ClientInfo{
		ID:            strings.TrimSpace(r.PostFormValue("id")),
		Name:          r.PostFormValue("name"),
		Public:        r.PostFormValue("type") != "confidential",
		RedirectURIs:  lines,
		AllowedScopes: r.PostForm["allowed_scopes"],
		DefaultScopes: r.PostForm["default_scopes"],
		GrantTypes:    r.PostForm["grant_types"],
		LogoURL:       r.PostFormValue("logo_url"),
		Contact:       r.PostFormValue("contact"),

		IDTokenSignedResponseAlg: r.PostFormValue("id_token_signed_response_alg"),
	}
}

func problemsOf(err error) ([]admin.Problem, bool) {
	if ps, ok := admin.ProblemsOf(err); ok {
		return ps, true
	}
	if e, ok := problem.As(err); ok && errors.Is(err, admin.ErrAlreadyExists) {
		return []admin.Problem{{Path: e.Field, Message: e.Message}}, true
	}
	return nil, false
}

func (h *Handler) postNewClient(w http.ResponseWriter, r *http.Request, p *page) {
	f := readForm(r)
	if len(f.GrantTypes) == 0 {
		f.GrantTypes = []string{clients.GrantAuthorizationCode} // unchecked boxes: the minimum, validated below
	}
	cc, err := h.svc.CreateClient(r.Context(), p.Actor, admin.ClientSpec{ID: f.ID, Name: f.Name, Public: f.Public,
		RedirectURIs: f.RedirectURIs, AllowedScopes: f.AllowedScopes, DefaultScopes: f.DefaultScopes,
		GrantTypes: f.GrantTypes, LogoURL: f.LogoURL, Contact: f.Contact, IDTokenAlg: f.IDTokenSignedResponseAlg})
	if probs, ok := problemsOf(err); ok {
		p.Title, p.Nav, p.Data, p.Problems = "Register a client", "clients", formData(true, f), probs
		h.render(w, r, http.StatusBadRequest, "client_form", p)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.showSecret(w, r, p, "Client registered", cc)
}

// postRegisterURL registers a client by its client ID metadata document
// URL; a refusal shows the clients page with the problem.
func (h *Handler) postRegisterURL(w http.ResponseWriter, r *http.Request, p *page) {
	c, err := h.svc.RegisterURLClient(r.Context(), p.Actor, admin.URLClientSpec{
		URL:           r.PostFormValue("client_id_url"),
		AllowedScopes: strings.Fields(strings.ReplaceAll(r.PostFormValue("allowed_scopes"), ",", " ")),
		DefaultScopes: strings.Fields(strings.ReplaceAll(r.PostFormValue("default_scopes"), ",", " ")),
		Pin:           []byte(strings.TrimSpace(r.PostFormValue("pinned_document"))),
	})
	if probs, ok := problemsOf(err); ok {
		cs, lerr := h.svc.ListClients(r.Context())
		if lerr != nil {
			h.serverError(w, r, lerr)
			return
		}
		p.Title, p.Nav, p.Data, p.Problems = "Clients", "clients", cs, probs
		h.render(w, r, http.StatusBadRequest, "clients", p)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/clients/"+url.PathEscape(c.ID)+"?done=registered", http.StatusSeeOther)
}

func (h *Handler) showSecret(w http.ResponseWriter, r *http.Request, p *page, heading string, cc admin.CreatedClient) {
	p.Title, p.Nav = heading, "clients"
	p.Data = struct {
		Heading string
		Client  admin.ClientInfo
		Secret  string
	}{heading, cc.Client, cc.Secret}
	h.render(w, r, http.StatusOK, "client_secret", p)
}

func (h *Handler) getClient(w http.ResponseWriter, r *http.Request, p *page) {
	c, err := h.svc.GetClient(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p.Title, p.Nav, p.Data, p.Notice = c.Name, "clients", formData(false, c), notice(r)
	h.render(w, r, http.StatusOK, "client_form", p)
}

func (h *Handler) postClient(w http.ResponseWriter, r *http.Request, p *page) {
	id := r.PathValue("id")
	f := readForm(r)
	patch := admin.ClientPatch{Name: &f.Name, RedirectURIs: &f.RedirectURIs, AllowedScopes: &f.AllowedScopes,
		DefaultScopes: &f.DefaultScopes, GrantTypes: &f.GrantTypes, LogoURL: &f.LogoURL, Contact: &f.Contact,
		IDTokenAlg: &f.IDTokenSignedResponseAlg}
	_, err := h.svc.UpdateClient(r.Context(), p.Actor, id, patch)
	if probs, ok := problemsOf(err); ok {
		cur, gerr := h.svc.GetClient(r.Context(), id)
		if gerr != nil {
			h.fail(w, r, gerr)
			return
		}
		f.ID, f.Public, f.Disabled = cur.ID, cur.Public, cur.Disabled
		p.Title, p.Nav, p.Data, p.Problems = cur.Name, "clients", formData(false, f), probs
		h.render(w, r, http.StatusBadRequest, "client_form", p)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/clients/"+url.PathEscape(id)+"?done=updated", http.StatusSeeOther)
}

func (h *Handler) setDisabled(w http.ResponseWriter, r *http.Request, p *page, disabled bool) {
	id := r.PathValue("id")
	if _, err := h.svc.SetClientDisabled(r.Context(), p.Actor, id, disabled); err != nil {
		h.fail(w, r, err)
		return
	}
	done := "enabled"
	if disabled {
		done = "disabled"
	}
	http.Redirect(w, r, "/admin/clients/"+url.PathEscape(id)+"?done="+done, http.StatusSeeOther)
}

func (h *Handler) postDisable(w http.ResponseWriter, r *http.Request, p *page) {
	h.setDisabled(w, r, p, true)
}
func (h *Handler) postEnable(w http.ResponseWriter, r *http.Request, p *page) {
	h.setDisabled(w, r, p, false)
}

func (h *Handler) postRotate(w http.ResponseWriter, r *http.Request, p *page) {
	cc, err := h.svc.RotateClientSecret(r.Context(), p.Actor, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.showSecret(w, r, p, "New client secret", cc)
}

func (h *Handler) postDelete(w http.ResponseWriter, r *http.Request, p *page) {
	id := r.PathValue("id")
	if r.PostFormValue("confirm") != "yes" {
		c, err := h.svc.GetClient(r.Context(), id)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		p.Title, p.Nav, p.Data = c.Name, "clients", formData(false, c)
		p.Problems = []admin.Problem{{Path: "confirm", Message: "tick the box to confirm the deletion"}}
		h.render(w, r, http.StatusBadRequest, "client_form", p)
		return
	}
	if err := h.svc.DeleteClient(r.Context(), p.Actor, id); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/clients?done=deleted", http.StatusSeeOther)
}

// ---- people ----

const usersPage = 50

func (h *Handler) getUsers(w http.ResponseWriter, r *http.Request, p *page) {
	q := r.URL.Query()
	query := strings.TrimSpace(q.Get("query"))
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	users, more, err := h.svc.ListUsers(r.Context(), query, usersPage, offset)
	if ps, ok := admin.ProblemsOf(err); ok {
		p.Problems, query, users, more = ps, "", nil, false
	} else if err != nil {
		h.serverError(w, r, err)
		return
	}
	pageURL := func(off int) string {
		v := url.Values{}
		if query != "" {
			v.Set("query", query)
		}
		if off > 0 {
			v.Set("offset", strconv.Itoa(off))
		}
		if len(v) == 0 {
			return "/admin/users"
		}
		return "/admin/users?" + v.Encode()
	}
	p.Title, p.Nav = "People", "users"
	p.Data = struct {
		Query            string
		Users            []admin.AccountInfo
		HasMore, HasPrev bool
		NextURL, PrevURL string
	}{query, users, more, offset > 0, pageURL(offset + len(users)), pageURL(max(offset-usersPage, 0))}
	h.render(w, r, http.StatusOK, "users", p)
}

func (h *Handler) getUser(w http.ResponseWriter, r *http.Request, p *page) {
	d, err := h.svc.GetUser(r.Context(), r.PathValue("email"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p.Title, p.Nav, p.Notice = d.Account.Label, "users", notice(r)
	p.Data = struct {
		admin.UserDetail
		Self bool
	}{d, d.Account.ID == p.Account.ID}
	h.render(w, r, http.StatusOK, "user", p)
}

func (h *Handler) setUserDisabled(w http.ResponseWriter, r *http.Request, p *page, disabled bool) {
	info, err := h.svc.SetUserDisabled(r.Context(), p.Actor, r.PathValue("email"), disabled)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	done := "user-enabled"
	if disabled {
		done = "user-disabled"
	}
	http.Redirect(w, r, "/admin/users/"+url.PathEscape(info.Email)+"?done="+done, http.StatusSeeOther)
}

func (h *Handler) postUserDisable(w http.ResponseWriter, r *http.Request, p *page) {
	h.setUserDisabled(w, r, p, true)
}

func (h *Handler) postUserEnable(w http.ResponseWriter, r *http.Request, p *page) {
	h.setUserDisabled(w, r, p, false)
}

// ---- businesses ----

func (h *Handler) getBusinesses(w http.ResponseWriter, r *http.Request, p *page) {
	bs, err := h.svc.ListBusinesses(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p.Title, p.Nav, p.Data, p.Notice = "Businesses", "businesses", bs, notice(r)
	h.render(w, r, http.StatusOK, "businesses", p)
}

func (h *Handler) postAgentBooking(w http.ResponseWriter, r *http.Request, p *page) {
	var on bool
	switch r.PostFormValue("enabled") {
	case "on":
		on = true
	case "off":
	default:
		h.ui.RenderError(w, r, http.StatusBadRequest, "Not possible", "The form did not say whether to turn agent booking on or off.")
		return
	}
	if _, err := h.svc.SetAgentBooking(r.Context(), p.Actor, r.PathValue("ref"), on); err != nil {
		h.fail(w, r, err)
		return
	}
	done := "agent-off"
	if on {
		done = "agent-on"
	}
	http.Redirect(w, r, "/admin/businesses?done="+done, http.StatusSeeOther)
}

// ---- catalog ----

type catalogForm struct {
	Content, Format string
}

func (h *Handler) getCatalog(w http.ResponseWriter, r *http.Request, p *page) {
	p.Title, p.Nav, p.Notice = "Catalog", "catalog", notice(r)
	h.render(w, r, http.StatusOK, "catalog", p)
}

func (h *Handler) postCatalog(w http.ResponseWriter, r *http.Request, p *page) {
	format := catalogfile.NormalizeFormat(r.PostFormValue("format"))
	content := r.PostFormValue("content")
	data := []byte(content)
	if f, fh, err := r.FormFile("file"); err == nil {
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, catalogfile.MaxFileBytes+1))
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		if len(bytes.TrimSpace(b)) > 0 {
			data, content = b, ""
			if ext := catalogfile.NormalizeFormat(strings.TrimPrefix(path.Ext(fh.Filename), ".")); ext != "" {
				format = ext
			}
		}
	}
	if format == "" {
		format = catalogfile.FormatYAML
	}
	p.Title, p.Nav = "Catalog", "catalog"
	if len(bytes.TrimSpace(data)) == 0 {
		p.Problems = []admin.Problem{{Message: "choose a catalog file or paste one"}}
		h.render(w, r, http.StatusBadRequest, "catalog", p)
		return
	}
	res, err := h.svc.ImportCatalogReport(r.Context(), p.Actor, data, format)
	if probs, ok := problemsOf(err); ok {
		p.Problems, p.Data = probs, catalogForm{Content: content, Format: format}
		h.render(w, r, http.StatusBadRequest, "catalog", p)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p.Notice = fmt.Sprintf("Imported %d business(es): %s.", len(res.Imported), strings.Join(res.Imported, ", "))
	if len(res.Warnings) > 0 {
		p.Warnings = res.Warnings
	}
	h.render(w, r, http.StatusOK, "catalog", p)
}

func (h *Handler) getCatalogExport(w http.ResponseWriter, r *http.Request, p *page) {
	format := catalogfile.NormalizeFormat(r.URL.Query().Get("format"))
	if format == "" {
		format = catalogfile.FormatYAML
	}
	data, err := h.svc.ExportCatalog(r.Context(), p.Actor, format)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", catalogfile.ContentType(format))
	w.Header().Set("Content-Disposition", "attachment; filename=linkslot-catalog."+format)
	_, _ = w.Write(data)
}

// ---- audit ----

type auditRow struct {
	When, Actor, Action, Target, Before, After, RequestID, ClientAddr string
}

const auditPage = 50

func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

func (h *Handler) getAudit(w http.ResponseWriter, r *http.Request, p *page) {
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	offset = max(offset, 0)
	evs, more, err := h.svc.ListAudit(r.Context(), auditPage, offset)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	rows := make([]auditRow, len(evs))
	for i, e := range evs {
		rows[i] = auditRow{When: e.CreatedAt.UTC().Format("2006-01-02 15:04:05"), Actor: e.ActorID, Action: e.Action,
			Target: e.Target, Before: indentJSON(e.Before), After: indentJSON(e.After), RequestID: e.RequestID, ClientAddr: e.ClientAddr}
	}
	p.Title, p.Nav = "Audit log", "audit"
	p.Data = struct {
		Events                 []auditRow
		HasMore, HasPrev       bool
		NextOffset, PrevOffset int
	}{rows, more, offset > 0, offset + len(evs), max(offset-auditPage, 0)}
	h.render(w, r, http.StatusOK, "audit", p)
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
