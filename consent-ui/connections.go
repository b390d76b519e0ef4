package consentui

import (
	"context"
	"errors"
	"net/http"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// The connected apps page and the scope words it shows.

type connection struct {
	ID         string
	ClientName string
	Scopes     []scope.Scope
	Link       store.Link
}

func (u *UI) clientName(ctx context.Context, cache map[string]string, id string) string {
	if id == "" {
		return "An app"
	}
	if n, ok := cache[id]; ok {
		return n
	}
	n := "An app that was removed"
	if c, err := u.store.GetClient(ctx, id); err == nil {
		n = c.Name
		if n == "" {
			n = c.ID
		}
	}
	cache[id] = n
	return n
}

func (u *UI) getConnections(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	links, err := u.id.Connections(r.Context(), acct.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	names := map[string]string{}
	var conns []connection
	for _, l := range links {
		conns = append(conns, connection{ID: l.ID, ClientName: u.clientName(r.Context(), names, l.ClientID),
			Scopes: describeScopes(l.Scopes), Link: l})
	}
	v := view{Title: "Connected apps", Nav: "connections", Account: &acct, CSRF: u.CSRFToken(w, r), Data: conns}
	switch r.URL.Query().Get("disconnected") {
	case "1":
		v.Notice = "The app was disconnected. It can no longer see or change your bookings; to use it again, connect it again from the app."
	case "0":
		v.Error = "That connection was not found. It may already have been disconnected."
	}
	u.render(w, r, http.StatusOK, "connections", v, nil)
}

func (u *UI) postDisconnect(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	if msg := controlCharError(r); msg != "" {
		u.RenderError(w, r, http.StatusBadRequest, "Nothing was disconnected", msg)
		return
	}
	err := u.id.Disconnect(r.Context(), acct.ID, r.PostFormValue("link_id"))
	switch {
	case err == nil:
		u.log.InfoContext(r.Context(), "consent-ui: link disconnected", "account_id", acct.ID, "link_id", r.PostFormValue("link_id"))
		u.redirect(w, r, "/account/connections?disconnected=1")
	case errors.Is(err, identity.ErrNotFound):
		u.RenderError(w, r, http.StatusNotFound, "Connection not found",
			"That connection was not found. It may already have been disconnected. Your connected apps are listed under Connected apps.")
	default:
		u.serverError(w, r, err)
	}
}

// describeScopes returns the scopes in vocabulary order with their plain
// descriptions.
func describeScopes(names []string) []scope.Scope {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	var out []scope.Scope
	for _, n := range scope.Ordered(set) {
		out = append(out, scopeText(n))
	}
	return out
}

func scopeText(name string) scope.Scope {
	if s, ok := scope.Lookup(name); ok {
		return s
	}
	return scope.Scope{Name: name, Description: "Use the permission “" + name + "”"}
}
