package adminui

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/scope"
)

// The clients pages: the list, registration, one client and its actions.

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
