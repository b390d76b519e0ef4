package consentui

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// Export is the document /account/export downloads: everything Linkslot
// keeps about the person, as they would recognise it.
type Export struct {
	ExportedAt time.Time        `json:"exported_at"`
	Account    exportAccount    `json:"account"`
	Links      []exportLink     `json:"links"`
	Bookings   []exportBooking  `json:"bookings"`
	Activity   []exportActivity `json:"activity"`
	Passkeys   []exportPasskey  `json:"passkeys"`
}

// exportPasskey is a passkey as the person named it; its key and
// credential id are the authenticator's, not personal data.
type exportPasskey struct {
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

type exportAccount struct {
	ID              string     `json:"id"`
	Email           string     `json:"email"`
	EmailVerifiedAt *time.Time `json:"email_verified_at,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
}

type exportLink struct {
	ID         string     `json:"id"`
	App        string     `json:"app"`
	ClientID   string     `json:"client_id"`
	Scopes     []string   `json:"scopes"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt time.Time  `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

type exportBooking struct {
	Reference   string     `json:"reference"`
	Business    string     `json:"business"`
	Service     string     `json:"service"`
	Staff       string     `json:"staff"`
	TimeZone    string     `json:"timezone"`
	StartsAt    time.Time  `json:"starts_at"`
	EndsAt      time.Time  `json:"ends_at"`
	Status      string     `json:"status"`
	Notes       string     `json:"notes,omitempty"`
	PriceCents  int64      `json:"price_cents"`
	Currency    string     `json:"currency"`
	CreatedAt   time.Time  `json:"created_at"`
	CancelledAt *time.Time `json:"cancelled_at,omitempty"`
}

type exportActivity struct {
	At               time.Time       `json:"at"`
	App              string          `json:"app"`
	Via              string          `json:"via"` // "agent" (through App) or "web" (the person on these pages)
	Action           string          `json:"action"`
	Summary          string          `json:"summary"`
	ConfirmationText string          `json:"confirmation_text"`
	Arguments        json.RawMessage `json:"arguments,omitempty"`
}

// export gathers the document for an account.
func (u *UI) export(ctx context.Context, acct store.Account) (Export, error) {
	doc := Export{ExportedAt: store.UTC(u.clock()), Links: []exportLink{}, Bookings: []exportBooking{}, Activity: []exportActivity{}, Passkeys: []exportPasskey{},
		Account: exportAccount{ID: acct.ID, Email: acct.Email, EmailVerifiedAt: acct.EmailVerifiedAt, CreatedAt: acct.CreatedAt}}
	names := map[string]string{}
	links, err := u.store.ListAccountLinks(ctx, acct.ID)
	if err != nil {
		return Export{}, err
	}
	for _, l := range links {
		doc.Links = append(doc.Links, exportLink{ID: l.ID, App: u.clientName(ctx, names, l.ClientID), ClientID: l.ClientID,
			Scopes: l.Scopes, Status: l.Status, CreatedAt: l.CreatedAt, LastUsedAt: l.LastUsedAt, RevokedAt: l.RevokedAt})
	}
	cats := map[string]store.Catalog{}
	const page = 200
	for off := 0; ; off += page {
		bs, err := u.store.ListAccountBookings(ctx, store.BookingFilter{AccountID: acct.ID, Status: "all", Now: u.clock(), Limit: page, Offset: off})
		if err != nil {
			return Export{}, err
		}
		more := len(bs) > page
		if more {
			bs = bs[:page]
		}
		for _, b := range bs {
			c, err := u.catalogOf(ctx, cats, b.BusinessID)
			if err != nil {
				return Export{}, err
			}
			doc.Bookings = append(doc.Bookings, bookingExport(c, b))
		}
		if !more {
			break
		}
	}
	for p := 1; ; p++ {
		ap, err := u.id.Activity(ctx, acct.ID, p, 100)
		if err != nil {
			return Export{}, err
		}
		for _, a := range ap.Entries {
			e := exportActivity{At: a.CreatedAt, App: u.clientName(ctx, names, a.ClientID), Via: a.Via, Action: toolWords(a.Tool),
				Summary: a.Summary, ConfirmationText: a.ConfirmationText}
			if a.Via == store.ViaWeb {
				e.App = "Linkslot on the web"
			}
			if json.Valid(a.Arguments) {
				e.Arguments = a.Arguments
			}
			doc.Activity = append(doc.Activity, e)
		}
		if !ap.HasMore {
			break
		}
	}
	pks, err := u.pk.List(ctx, acct.ID)
	if err != nil {
		return Export{}, err
	}
	for _, p := range pks {
		doc.Passkeys = append(doc.Passkeys, exportPasskey{Name: p.Name, CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt})
	}
	return doc, nil
}

// catalogOf returns the catalog of a business, loading each business once
// per cache.
func (u *UI) catalogOf(ctx context.Context, cache map[string]store.Catalog, businessID string) (store.Catalog, error) {
	if c, ok := cache[businessID]; ok {
		return c, nil
	}
	c, err := u.store.LoadCatalogByID(ctx, businessID)
	if err != nil {
		return store.Catalog{}, err
	}
	cache[businessID] = c
	return c, nil
}

func bookingExport(c store.Catalog, b store.Booking) exportBooking {
	e := exportBooking{Reference: b.Reference, Business: c.Business.Name, TimeZone: c.Business.TimeZone, StartsAt: b.StartsAt,
		EndsAt: b.EndsAt, Status: b.Status, Notes: b.Notes, PriceCents: b.PriceCents, Currency: b.Currency, CreatedAt: b.CreatedAt,
		CancelledAt: b.CancelledAt}
	for _, s := range c.Services {
		if s.ID == b.ServiceID {
			e.Service = s.Name
		}
	}
	for _, s := range c.Staff {
		if s.ID == b.StaffID {
			e.Staff = s.Name
		}
	}
	return e
}

func (u *UI) getExport(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	doc, err := u.export(r.Context(), acct)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	setSecurityHeaders(w, nil)
	noStore(w)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="linkslot-export.json"`)
	u.log.InfoContext(r.Context(), "consent-ui: account exported", "account_id", acct.ID)
	w.Write(append(body, '\n'))
}
