package adminui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// The audit log page.

type auditRow struct {
	When, Actor, Action, Target, Before, After, RequestID, ClientAddr string
}

const auditPage = 50

func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

func (h *Handler) getAudit(w http.ResponseWriter, r *http.Request, p *page) {
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	offset = max(offset, 0)
	evs, more, err := h.svc.ListAudit(r.Context(), auditPage, offset)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	rows := make([]auditRow, len(evs))
	for i, e := range evs {
		rows[i] = auditRow{When: e.CreatedAt.UTC().Format("2006-01-02 15:04:05"), Actor: e.ActorID, Action: e.Action,
			Target: e.Target, Before: indentJSON(e.Before), After: indentJSON(e.After), RequestID: e.RequestID, ClientAddr: e.ClientAddr}
	}
	p.Title, p.Nav = "Audit log", "audit"
	p.Data = struct {
		Events                 []auditRow
		HasMore, HasPrev       bool
		NextOffset, PrevOffset int
	}{rows, more, offset > 0, offset + len(evs), max(offset-auditPage, 0)}
	h.render(w, r, http.StatusOK, "audit", p)
}
