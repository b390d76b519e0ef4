package adminui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/linkslot/linkslot/internal/admin"
)

// The users pages: the list, one account, and disabling it.

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
