package adminapi

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/problem"
)

// The clients resource: /admin/api/clients and its actions.

type clientBody struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Public        bool     `json:"public"`
	RedirectURIs  []string `json:"redirect_uris"`
	AllowedScopes []string `json:"allowed_scopes"`
	DefaultScopes []string `json:"default_scopes"`
	GrantTypes    []string `json:"grant_types"`
	LogoURL       string   `json:"logo_url"`
	Contact       string   `json:"contact"`
	// IDTokenAlg is ES256 or RS256; absent, the server's default.
	IDTokenAlg string `json:"id_token_signed_response_alg"`
	// ClientIDURL registers a client by the URL of its client ID metadata
	// document (docs/reference.md §10); only allowed_scopes, default_scopes and
	// pinned_document (the document itself, a JSON object) go with it.
	ClientIDURL    string          `json:"client_id_url"`
	PinnedDocument json.RawMessage `json:"pinned_document"`
}

type clientPatchBody struct {
	Name          *string   `json:"name"`
	Public        *bool     `json:"public"`
	RedirectURIs  *[]string `json:"redirect_uris"`
	AllowedScopes *[]string `json:"allowed_scopes"`
	DefaultScopes *[]string `json:"default_scopes"`
	GrantTypes    *[]string `json:"grant_types"`
	LogoURL       *string   `json:"logo_url"`
	Contact       *string   `json:"contact"`
	IDTokenAlg    *string   `json:"id_token_signed_response_alg"`
}

// clientAnswer is a client with, once, its new secret.
type clientAnswer struct {
	Client admin.ClientInfo `json:"client"`
	Secret string           `json:"client_secret,omitempty"`
}

func (a *api) listClients(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	cs, err := a.svc.ListClients(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"clients": cs})
}

func (a *api) createClient(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b clientBody
	if !decode(w, r, &b) {
		return
	}
	if b.ClientIDURL != "" {
		a.registerURLClient(w, r, actor, b)
		return
	}
	cc, err := a.svc.CreateClient(r.Context(), actor, admin.ClientSpec{ID: b.ID, Name: b.Name, Public: b.Public,
		RedirectURIs: b.RedirectURIs, AllowedScopes: b.AllowedScopes, DefaultScopes: b.DefaultScopes,
		GrantTypes: b.GrantTypes, LogoURL: b.LogoURL, Contact: b.Contact, IDTokenAlg: b.IDTokenAlg})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"clients/"+url.PathEscape(cc.Client.ID))
	writeJSON(w, http.StatusCreated, clientAnswer{cc.Client, cc.Secret})
}

func (a *api) registerURLClient(w http.ResponseWriter, r *http.Request, actor admin.Actor, b clientBody) {
	if b.ID != "" || b.Name != "" || b.Public || len(b.RedirectURIs) > 0 || len(b.GrantTypes) > 0 || b.LogoURL != "" || b.Contact != "" ||
		b.IDTokenAlg != "" {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "a client_id_url client takes its id, name, redirect URIs and authentication from its document; send only client_id_url, allowed_scopes, default_scopes and pinned_document",
			[]admin.Problem{{Path: "client_id_url", Message: "send only client_id_url, allowed_scopes, default_scopes and pinned_document"}})
		return
	}
	pin := []byte(b.PinnedDocument)
	if len(pin) > 0 && pin[0] == '"' { // a document sent as a JSON string
		var s string
		if err := json.Unmarshal(pin, &s); err == nil {
			pin = []byte(s)
		}
	}
	if string(pin) == "null" {
		pin = nil
	}
	c, err := a.svc.RegisterURLClient(r.Context(), actor, admin.URLClientSpec{URL: b.ClientIDURL,
		AllowedScopes: b.AllowedScopes, DefaultScopes: b.DefaultScopes, Pin: pin})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"clients/"+url.PathEscape(c.ID))
	writeJSON(w, http.StatusCreated, clientAnswer{Client: c})
}

func (a *api) getClient(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	c, err := a.svc.GetClient(r.Context(), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, clientAnswer{Client: c})
}

func (a *api) updateClient(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b clientPatchBody
	if !decode(w, r, &b) {
		return
	}
	if b.Public != nil {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "the request was refused; see problems",
			[]admin.Problem{{Path: "public", Message: "a client cannot switch between public and confidential; register a new client"}})
		return
	}
	c, err := a.svc.UpdateClient(r.Context(), actor, r.PathValue("id"), admin.ClientPatch{Name: b.Name,
		RedirectURIs: b.RedirectURIs, AllowedScopes: b.AllowedScopes, DefaultScopes: b.DefaultScopes,
		GrantTypes: b.GrantTypes, LogoURL: b.LogoURL, Contact: b.Contact, IDTokenAlg: b.IDTokenAlg})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, clientAnswer{Client: c})
}

func (a *api) deleteClient(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	if err := a.svc.DeleteClient(r.Context(), actor, r.PathValue("id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *api) setDisabled(w http.ResponseWriter, r *http.Request, actor admin.Actor, disabled bool) {
	c, err := a.svc.SetClientDisabled(r.Context(), actor, r.PathValue("id"), disabled)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, clientAnswer{Client: c})
}

func (a *api) disableClient(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	a.setDisabled(w, r, actor, true)
}

func (a *api) enableClient(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	a.setDisabled(w, r, actor, false)
}

func (a *api) rotateSecret(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	cc, err := a.svc.RotateClientSecret(r.Context(), actor, r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, clientAnswer{cc.Client, cc.Secret})
}
