package adminapi

import (
	"net/http"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/problem"
)

// The users resource: /admin/api/users and its actions.

func (a *api) createUser(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b struct {
		Email    string `json:"email"`
		Password string `json:"password"`
		Admin    bool   `json:"admin"`
	}
	if !decode(w, r, &b) {
		return
	}
	acct, err := a.svc.CreateUser(r.Context(), actor, b.Email, b.Password, b.Admin)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"account": acct})
}

func (a *api) setAdmin(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b struct {
		Admin *bool `json:"admin"`
	}
	if !decode(w, r, &b) {
		return
	}
	if b.Admin == nil {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "the request was refused; see problems",
			[]admin.Problem{{Path: "admin", Message: "is required (true or false)"}})
		return
	}
	acct, err := a.svc.SetAdmin(r.Context(), actor, r.PathValue("email"), *b.Admin)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"account": acct})
}

func (a *api) listUsers(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	limit, offset, ok := pageParams(w, r)
	if !ok {
		return
	}
	users, more, err := a.svc.ListUsers(r.Context(), r.URL.Query().Get("query"), limit, offset)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writePage(w, "users", users, len(users), more, offset)
}

func (a *api) getUser(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	d, err := a.svc.GetUser(r.Context(), r.PathValue("email"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (a *api) setUserDisabled(w http.ResponseWriter, r *http.Request, actor admin.Actor, disabled bool) {
	acct, err := a.svc.SetUserDisabled(r.Context(), actor, r.PathValue("email"), disabled)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"account": acct})
}

func (a *api) disableUser(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	a.setUserDisabled(w, r, actor, true)
}

func (a *api) enableUser(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	a.setUserDisabled(w, r, actor, false)
}
