package consentui

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
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

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/passkey"
	"github.com/linkslot/linkslot/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Store is the part of store.Store the pages use: the identity service's,
// the clients they name, and the bookings and catalogs the export reads.
type Store interface {
	identity.Store
	GetClient(ctx context.Context, id string) (store.Client, error)
	ListAccountBookings(ctx context.Context, f store.BookingFilter) ([]store.Booking, error)
	LoadCatalogByID(ctx context.Context, businessID string) (store.Catalog, error)
	store.AccountErasure
	feed.Store    // the account page's calendar feed
	booking.Store // My bookings
	store.Passkeys
	store.WebAuthnCeremonies
}

var _ Store = store.Store(nil)

// Config configures the pages. Store, SecretKey, Identity, Passkeys and
// Bookings are required: the server's wiring builds the services once
// (internal/app.NewAuthServices) and hands them in.
type Config struct {
	Store Store
	// Identity is the account service.
	Identity *identity.Service
	// Passkeys is the passkey service (unavailable for an IP-address
	// issuer, which the service itself says).
	Passkeys *passkey.Service
	// Bookings is the process's booking engine, read by My bookings.
	Bookings *booking.Service
	// Feeds serves the account page's calendar feed; nil: no feed.
	Feeds *feed.Feeds
	// SecretKey keys the CSRF tokens (at least 32 bytes).
	SecretKey []byte
	// Issuer is the server's public URL; an https issuer makes cookies
	// Secure (with the __Host- prefix).
	Issuer string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock defaults to store.SystemClock.
	Clock store.Clock
	// ClientAddr names the client address sign-in throttling counts per;
	// the default is clientaddr.Of: the address the server's
	// clientaddr.Middleware decided (trusted proxies), else the TCP peer.
	ClientAddr func(r *http.Request) string
	// ActivityPerPage is the Activity page size (default 20).
	ActivityPerPage int
	// Mutations cancels bookings as the person on the web (notified like
	// any change): from My bookings, and a deleted account's upcoming
	// ones. Without it, My bookings offers no Cancel and an account with
	// upcoming bookings cannot be deleted.
	Mutations *mutation.Service
	// DevMailURL is the development mailbox (/dev/mail), set only in
	// development when e-mail is written there rather than sent: the page
	// after a sign-up then points to it for the confirmation e-mail
	// (docs/reference.md §15).
	DevMailURL string
}

// WithServices is c with the pages' services taken from svc, the ones the
// server's wiring built once (internal/app.NewAuthServices).
func (c Config) WithServices(svc *app.AuthServices) Config {
	c.Identity, c.Passkeys, c.Bookings, c.Feeds, c.Mutations = svc.Identity, svc.Passkeys, svc.Bookings, svc.Feeds, svc.Mutations
	return c
}

// UI serves the pages and implements consent.AuthorizeUI.
type UI struct {
	store      Store
	id         *identity.Service
	pk         *passkey.Service
	csrfKey    []byte
	secure     bool
	log        *slog.Logger
	clock      store.Clock
	clientAddr func(*http.Request) string
	perPage    int
	pages      map[string]*template.Template
	mut        *mutation.Service
	bookings   *booking.Service // reads My bookings
	feeds      *feed.Feeds      // nil without an issuer: no calendar feed on the account page

	sessionCookie string
	anonCookie    string
	devMail       string // Config.DevMailURL
}

var _ consent.AuthorizeUI = (*UI)(nil)

// New builds the UI.
func New(cfg Config) (*UI, error) {
	if cfg.Store == nil {
		return nil, errors.New("consentui: Config.Store is required")
	}
	if len(cfg.SecretKey) < 32 {
		return nil, errors.New("consentui: Config.SecretKey must have at least 32 bytes")
	}
	switch {
	case cfg.Identity == nil:
		return nil, errors.New("consentui: Config.Identity is required (the identity service)")
	case cfg.Passkeys == nil:
		return nil, errors.New("consentui: Config.Passkeys is required (the passkey service)")
	case cfg.Bookings == nil:
		return nil, errors.New("consentui: Config.Bookings is required (the booking engine)")
	}
	u := &UI{store: cfg.Store, id: cfg.Identity, log: cfg.Logger, clock: cfg.Clock,
		clientAddr: cfg.ClientAddr, perPage: cfg.ActivityPerPage, mut: cfg.Mutations, pk: cfg.Passkeys,
		bookings: cfg.Bookings, feeds: cfg.Feeds, devMail: cfg.DevMailURL}
	if u.log == nil {
		u.log = slog.Default()
	}
	if u.clock == nil {
		u.clock = store.SystemClock
	}
	if u.clientAddr == nil {
		u.clientAddr = clientaddr.Of
	}
	if u.perPage <= 0 {
		u.perPage = 20
	}
	if cfg.Issuer != "" {
		iu, err := url.Parse(cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("consentui: issuer: %w", err)
		}
		u.secure = iu.Scheme == "https"
	}
	mac := hmac.New(sha256.New, cfg.SecretKey)
	mac.Write([]byte("linkslot consent-ui csrf v1"))
	u.csrfKey = mac.Sum(nil)
	u.sessionCookie, u.anonCookie = "linkslot_session", "linkslot_csrf"
	if u.secure {
		u.sessionCookie, u.anonCookie = "__Host-linkslot_session", "__Host-linkslot_csrf"
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	u.pages = pages
	return u, nil
}

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"date":       formatDate,
		"datetime":   formatDateTime,
		"toolWords":  toolWords,
		"scopeText":  scopeText,
		"initial":    initial,
		"hostBreaks": hostBreaks,
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("consentui: parse %s: %w", n, err)
		}
		out[base] = t
	}
	return out, nil
}

// Mount registers every page on mux.
func (u *UI) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /login", u.getLogin)
	mux.HandleFunc("POST /login", u.postLogin)
	mux.HandleFunc("GET /signup", u.getSignUp)
	mux.HandleFunc("POST /signup", u.postSignUp)
	mux.HandleFunc("GET /logout", u.getLogout)
	mux.HandleFunc("POST /logout", u.postLogout)
	mux.HandleFunc("GET /account", u.getAccount)
	mux.HandleFunc("GET /account/password", u.getPassword)
	mux.HandleFunc("POST /account/password", u.postPassword)
	mux.HandleFunc("POST /account/calendar", u.postCalendar)
	mux.HandleFunc("GET /account/connections", u.getConnections)
	mux.HandleFunc("POST /account/connections/disconnect", u.postDisconnect)
	mux.HandleFunc("GET /account/activity", u.getActivity)
	mux.HandleFunc("GET /account/bookings", u.getBookings)
	mux.HandleFunc("GET /account/bookings/cancel", u.getCancel)
	mux.HandleFunc("POST /account/bookings/cancel", u.postCancel)
	mux.HandleFunc("POST /account/bookings/waitlist/leave", u.postLeaveWaitlist)
	mux.HandleFunc("GET /account/export", u.getExport)
	mux.HandleFunc("GET /account/passkeys", u.getPasskeys)
	mux.HandleFunc("POST /account/passkeys", u.postPasskeyAdd)
	mux.HandleFunc("POST /account/passkeys/rename", u.postPasskeyRename)
	mux.HandleFunc("POST /account/passkeys/remove", u.postPasskeyRemove)
	mux.HandleFunc("POST /login/passkey", u.postLoginPasskey)
	mux.HandleFunc("GET /account/delete", u.getDelete)
	mux.HandleFunc("POST /account/delete", u.postDelete)
	mux.HandleFunc("GET /verify", u.getVerify)
	mux.HandleFunc("POST /account/verify/resend", u.postResendVerification)
	mux.HandleFunc("GET /password/forgot", u.getForgot)
	mux.HandleFunc("POST /password/forgot", u.postForgot)
	mux.HandleFunc("GET /password/reset", u.getReset)
	mux.HandleFunc("POST /password/reset", u.postReset)
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w, nil)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
}

// Identity returns the account service the pages use.
func (u *UI) Identity() *identity.Service { return u.id }

func initial(name string) string {
	for _, r := range strings.TrimSpace(name) {
		return strings.ToUpper(string(r))
	}
	return "?"
}

// hostBreaks escapes a host name and lets a narrow screen wrap it after a
// dot or the colon before the port, rather than inside a label.
func hostBreaks(host string) template.HTML {
	var b strings.Builder
	for _, r := range host {
		b.WriteString(template.HTMLEscapeString(string(r)))
		if r == '.' || r == ':' {
			b.WriteString("<wbr>")
		}
	}
	return template.HTML(b.String())
}

func formatDate(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2 Jan 2006")
}

func formatDateTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2 Jan 2006, 15:04 UTC")
}
