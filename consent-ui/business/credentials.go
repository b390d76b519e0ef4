package businessui

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// ---- self-reported credentials (owners) ----

// The Credentials page lists the business's licenses, insurance and
// certifications and adds, edits and removes them (docs/reference.md §16).
// Every form carries the version of the list it showed: a list changed
// since answers "Someone else changed the credentials …" and changes
// nothing.

type credentialRow struct {
	store.Credential
	Pos int // 1 is the first
}

type credentialsData struct {
	Rows    []credentialRow
	Kinds   []string
	Version string
	// Edit is the position of the credential the form edits (0: the form
	// adds one); Form is what the form shows.
	Edit int
	Form store.Credential
}

func (h *Handler) getCredentials(w http.ResponseWriter, r *http.Request, p *page) {
	edit, _ := strconv.Atoi(r.URL.Query().Get("edit"))
	h.showCredentials(w, r, p, http.StatusOK, edit, nil)
}

// showCredentials renders the page; form, when not nil, is the form sent
// back with its problems.
func (h *Handler) showCredentials(w http.ResponseWriter, r *http.Request, p *page, status, edit int, form *store.Credential) {
	cs, err := h.svc.Credentials(r.Context(), p.M)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := credentialsData{Kinds: business.CredentialKinds, Version: business.CredentialsVersion(cs)}
	for i, c := range cs {
		d.Rows = append(d.Rows, credentialRow{Credential: c, Pos: i + 1})
	}
	if edit >= 1 && edit <= len(cs) {
		d.Edit, d.Form = edit, cs[edit-1]
	}
	if form != nil {
		d.Form = *form
	}
	if d.Form.Kind == "" {
		d.Form.Kind = store.CredentialLicense
	}
	p.Title, p.Nav, p.Data = "Credentials", "credentials", d
	if p.Notice == "" {
		p.Notice = notice(r)
	}
	h.render(w, r, status, "credentials", p)
}

func credentialOf(r *http.Request) store.Credential {
	return store.Credential{Kind: r.PostFormValue("kind"), Name: r.PostFormValue("name"), Issuer: r.PostFormValue("issuer"),
		Number: r.PostFormValue("number"), ValidUntil: r.PostFormValue("valid_until")}
}

func (h *Handler) postCredentialAdd(w http.ResponseWriter, r *http.Request, p *page) {
	c := credentialOf(r)
	err := h.svc.AddCredential(r.Context(), p.M, r.PostFormValue("version"), c)
	h.credentialDone(w, r, p, err, 0, &c, "credential-added")
}

// position reads the {n} of the address: 1 is the first credential.
func position(r *http.Request) (int, bool) {
	n, err := strconv.Atoi(r.PathValue("n"))
	return n, err == nil && n >= 1 && strconv.Itoa(n) == r.PathValue("n")
}

func (h *Handler) postCredentialEdit(w http.ResponseWriter, r *http.Request, p *page) {
	n, ok := position(r)
	if !ok {
		h.notFound(w, r)
		return
	}
	c := credentialOf(r)
	err := h.svc.UpdateCredential(r.Context(), p.M, r.PostFormValue("version"), n, c)
	h.credentialDone(w, r, p, err, n, &c, "credential-saved")
}

func (h *Handler) postCredentialRemove(w http.ResponseWriter, r *http.Request, p *page) {
	n, ok := position(r)
	if !ok {
		h.notFound(w, r)
		return
	}
	err := h.svc.RemoveCredential(r.Context(), p.M, r.PostFormValue("version"), n)
	h.credentialDone(w, r, p, err, 0, nil, "credential-removed")
}

// credentialDone answers a change: back to the list, or the page again
// with every problem and the form as it was sent (a list changed since
// the form was shown: as it is now, the form emptied).
func (h *Handler) credentialDone(w http.ResponseWriter, r *http.Request, p *page, err error, edit int, form *store.Credential, done string) {
	if err == nil {
		redirect(w, r, p.Base()+"/credentials", done)
		return
	}
	if errors.Is(err, business.ErrCredentialsChanged) {
		p.Problems = []problem.Problem{{Message: business.ErrCredentialsChanged.Message}}
		h.showCredentials(w, r, p, http.StatusConflict, 0, nil)
		return
	}
	ps, ok := problemsOf(err)
	if !ok {
		h.fail(w, r, err)
		return
	}
	if form != nil {
		form.Name, form.Issuer, form.Number = strings.TrimSpace(form.Name), strings.TrimSpace(form.Issuer), strings.TrimSpace(form.Number)
	}
	p.Problems = ps
	h.showCredentials(w, r, p, http.StatusBadRequest, edit, form)
}
