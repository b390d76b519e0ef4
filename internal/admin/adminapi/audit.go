package adminapi

import (
	"net/http"

	"github.com/linkslot/linkslot/internal/admin"
)

// The audit log: /admin/api/audit.

func (a *api) listAudit(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	limit, offset, ok := pageParams(w, r)
	if !ok {
		return
	}
	evs, more, err := a.svc.ListAudit(r.Context(), limit, offset)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writePage(w, "events", evs, len(evs), more, offset)
}
