package adminui

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/problem"
)

// Members of a business (docs/reference.md §16): administrators add and
// remove owners here; owners invite their staff in the business console.

type membersData struct {
	Business string
	Name     string
	Members  []admin.MemberInfo
	Email    string
}

func (h *Handler) getMembers(w http.ResponseWriter, r *http.Request, p *page) {
	h.showMembers(w, r, p, http.StatusOK, "")
}

func (h *Handler) showMembers(w http.ResponseWriter, r *http.Request, p *page, status int, email string) {
	ref := r.PathValue("ref")
	ms, err := h.svc.ListMembers(r.Context(), ref)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := membersData{Business: ref, Members: ms, Email: email}
	if bs, err := h.svc.ListBusinesses(r.Context()); err == nil {
		for _, b := range bs {
			if b.Reference == ref {
				d.Name = b.Name
			}
		}
	}
	p.Title, p.Nav, p.Data = "Members", "businesses", d
	if p.Notice == "" {
		p.Notice = notice(r)
	}
	h.render(w, r, status, "members", p)
}

func (h *Handler) postMember(w http.ResponseWriter, r *http.Request, p *page) {
	ref, email := r.PathValue("ref"), r.PostFormValue("email")
	_, err := h.svc.AddMember(r.Context(), p.Actor, ref, email, r.PostFormValue("staff"))
	if err == nil {
		http.Redirect(w, r, "/admin/businesses/"+url.PathEscape(ref)+"/members?done=member-added", http.StatusSeeOther)
		return
	}
	if ps, ok := problemsOf(err); ok {
		p.Problems = ps
	} else if e, ok := problem.As(err); ok && errors.Is(err, admin.ErrNotFound) && e.Field == "email" {
		p.Problems = []admin.Problem{{Path: "email", Message: e.Message}}
	} else {
		h.fail(w, r, err)
		return
	}
	h.showMembers(w, r, p, http.StatusBadRequest, email)
}

func (h *Handler) postMemberRemove(w http.ResponseWriter, r *http.Request, p *page) {
	ref := r.PathValue("ref")
	if err := h.svc.RemoveMember(r.Context(), p.Actor, ref, r.PostFormValue("email")); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/businesses/"+url.PathEscape(ref)+"/members?done=member-removed", http.StatusSeeOther)
}
