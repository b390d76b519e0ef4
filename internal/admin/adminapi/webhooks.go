package adminapi

import (
	"net/http"
	"net/url"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/problem"
)

// ---- webhooks (docs/reference.md §11) ----

// webhookAnswer is an endpoint with, on create and rotate-secret only, its
// new secret.
type webhookAnswer struct {
	Webhook admin.WebhookInfo `json:"webhook"`
	Secret  string            `json:"secret,omitempty"`
}

func (a *api) listWebhooks(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	ws, err := a.svc.ListWebhooks(r.Context(), r.URL.Query().Get("business"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": ws})
}

func (a *api) createWebhook(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b struct {
		Business string   `json:"business"`
		URL      string   `json:"url"`
		Events   []string `json:"events"`
	}
	if !decode(w, r, &b) {
		return
	}
	if b.Business == "" {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "the request was refused; see problems",
			[]admin.Problem{{Path: "business", Message: "the business reference is required"}})
		return
	}
	cw, err := a.svc.CreateWebhook(r.Context(), actor, b.Business, b.URL, b.Events)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"webhooks/"+url.PathEscape(cw.ID))
	writeJSON(w, http.StatusCreated, webhookAnswer{cw.WebhookInfo, cw.Secret})
}

func (a *api) getWebhook(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	wh, err := a.svc.GetWebhook(r.Context(), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, webhookAnswer{Webhook: wh})
}

func (a *api) updateWebhook(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b struct {
		URL     *string   `json:"url"`
		Events  *[]string `json:"events"`
		Enabled *bool     `json:"enabled"`
	}
	if !decode(w, r, &b) {
		return
	}
	if b.Enabled != nil {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "the request was refused; see problems",
			[]admin.Problem{{Path: "enabled", Message: "use POST …/disable or …/enable"}})
		return
	}
	wh, err := a.svc.UpdateWebhook(r.Context(), actor, r.PathValue("id"), admin.WebhookPatch{URL: b.URL, Events: b.Events})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, webhookAnswer{Webhook: wh})
}

func (a *api) deleteWebhook(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	if err := a.svc.DeleteWebhook(r.Context(), actor, r.PathValue("id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *api) setWebhookEnabled(w http.ResponseWriter, r *http.Request, actor admin.Actor, enabled bool) {
	wh, err := a.svc.SetWebhookEnabled(r.Context(), actor, r.PathValue("id"), enabled)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, webhookAnswer{Webhook: wh})
}

func (a *api) disableWebhook(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	a.setWebhookEnabled(w, r, actor, false)
}

func (a *api) enableWebhook(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	a.setWebhookEnabled(w, r, actor, true)
}

func (a *api) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	cw, err := a.svc.RotateWebhookSecret(r.Context(), actor, r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, webhookAnswer{cw.WebhookInfo, cw.Secret})
}

// deliveryLimit reads limit (1–1000, default 100).
func deliveryLimit(w http.ResponseWriter, r *http.Request) (int, bool) {
	n, problems := limitParam(r.URL.Query(), 100, 1000, nil)
	if len(problems) > 0 {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "the request was refused; see problems", problems)
		return 0, false
	}
	return n, true
}

func (a *api) webhookDeliveries(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	limit, ok := deliveryLimit(w, r)
	if !ok {
		return
	}
	ds, err := a.svc.WebhookDeliveries(r.Context(), r.PathValue("id"), limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": ds})
}

func (a *api) listDeliveries(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	limit, ok := deliveryLimit(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	ds, err := a.svc.ListDeliveries(r.Context(), q.Get("status"), q.Get("channel"), limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": ds})
}

func (a *api) replayDelivery(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	d, err := a.svc.ReplayDelivery(r.Context(), actor, r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"delivery": d})
}
