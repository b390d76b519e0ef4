package businessui

import (
	"net/http"

	"github.com/linkslot/linkslot/internal/callbacks"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
)

// The Callbacks page: the business's open callback requests
// (docs/reference.md §16 "Callback requests"), each with the person's name
// and address as their account has them, and "Mark done", which tells the
// person. Owners and staff both see it: a request is for the business.

type callbacksData struct {
	Items []callbacks.Item
	None  bool // no inbox on this server
}

func (h *Handler) getCallbacks(w http.ResponseWriter, r *http.Request, p *page) {
	p.Title, p.Nav = "Callback requests", "callbacks"
	d := callbacksData{None: h.inbox == nil}
	if h.inbox != nil {
		items, err := h.inbox.Open(r.Context(), p.M.Business.ID, 200)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		d.Items = items
	}
	p.Data = d
	if p.Notice == "" {
		p.Notice = notice(r)
	}
	h.render(w, r, http.StatusOK, "callbacks", p)
}

func (h *Handler) postCallbackDone(w http.ResponseWriter, r *http.Request, p *page) {
	if h.inbox == nil {
		h.notFound(w, r)
		return
	}
	_, err := h.inbox.MarkDone(r.Context(), p.M.Business, r.PathValue("ref"), p.Account.ID, requestid.From(r.Context()))
	switch problem.CodeOf(err) {
	case "":
		redirect(w, r, p.Base()+"/callbacks", "callback-done")
	case problem.CodeNotFound, problem.CodeConflict:
		redirect(w, r, p.Base()+"/callbacks", "callback-gone")
	default:
		h.fail(w, r, err)
	}
}
