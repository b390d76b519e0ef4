package adminui

import (
	"net/http"
	"slices"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/notify"
)

// ---- webhooks (docs/reference.md §11) ----

type webhookForm struct {
	Business, URL string
	Events        []string
}

type webhooksData struct {
	Endpoints  []admin.WebhookInfo
	Businesses []admin.BusinessInfo
	Form       webhookForm
	AllEvents  []string
	Failed     []admin.DeliveryInfo
}

func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request, p *page, status int, f webhookForm) {
	eps, err := h.svc.ListWebhooks(r.Context(), "")
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	bs, err := h.svc.ListBusinesses(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	failed, err := h.svc.ListDeliveries(r.Context(), "failed", "", 50)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	if f.Events == nil {
		f.Events = notify.Events
	}
	p.Title, p.Nav = "Webhooks", "webhooks"
	p.Data = webhooksData{Endpoints: eps, Businesses: bs, Form: f, AllEvents: notify.Events, Failed: failed}
	h.render(w, r, status, "webhooks", p)
}

func (h *Handler) getWebhooks(w http.ResponseWriter, r *http.Request, p *page) {
	p.Notice = notice(r)
	h.webhooksPage(w, r, p, http.StatusOK, webhookForm{})
}

func (h *Handler) postNewWebhook(w http.ResponseWriter, r *http.Request, p *page) {
	_ = r.ParseForm()
	f := webhookForm{Business: r.PostFormValue("business"), URL: r.PostFormValue("url"), Events: r.PostForm["events"]}
	if len(f.Events) == 0 {
		p.Problems = []admin.Problem{{Path: "events", Message: "choose at least one event"}}
		h.webhooksPage(w, r, p, http.StatusBadRequest, webhookForm{Business: f.Business, URL: f.URL, Events: []string{}})
		return
	}
	cw, err := h.svc.CreateWebhook(r.Context(), p.Actor, f.Business, f.URL, f.Events)
	if probs, ok := problemsOf(err); ok {
		p.Problems = probs
		h.webhooksPage(w, r, p, http.StatusBadRequest, f)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.showWebhookSecret(w, r, p, "Webhook endpoint registered", cw)
}

type webhookSecretData struct {
	Heading  string
	Endpoint admin.WebhookInfo
	Secret   string
}

func (h *Handler) showWebhookSecret(w http.ResponseWriter, r *http.Request, p *page, heading string, cw admin.CreatedWebhook) {
	w.Header().Set("Cache-Control", "no-store")
	p.Title, p.Nav, p.Data = heading, "webhooks", webhookSecretData{Heading: heading, Endpoint: cw.WebhookInfo, Secret: cw.Secret}
	h.render(w, r, http.StatusOK, "webhook_secret", p)
}

type webhookData struct {
	Endpoint   admin.WebhookInfo
	Deliveries []admin.DeliveryInfo
}

func (h *Handler) getWebhook(w http.ResponseWriter, r *http.Request, p *page) {
	id := r.PathValue("id")
	e, err := h.svc.GetWebhook(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ds, err := h.svc.WebhookDeliveries(r.Context(), id, 100)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p.Title, p.Nav, p.Notice, p.Data = "Webhook endpoint", "webhooks", notice(r), webhookData{Endpoint: e, Deliveries: ds}
	h.render(w, r, http.StatusOK, "webhook", p)
}

func (h *Handler) postWebhookAction(w http.ResponseWriter, r *http.Request, p *page) {
	id := r.PathValue("id")
	var err error
	done := ""
	switch r.PathValue("action") {
	case "disable":
		done = "webhook-disabled"
		_, err = h.svc.SetWebhookEnabled(r.Context(), p.Actor, id, false)
	case "enable":
		done = "webhook-enabled"
		_, err = h.svc.SetWebhookEnabled(r.Context(), p.Actor, id, true)
	case "rotate-secret":
		cw, err := h.svc.RotateWebhookSecret(r.Context(), p.Actor, id)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.showWebhookSecret(w, r, p, "New webhook secret", cw)
		return
	case "delete":
		if r.PostFormValue("confirm") != "yes" {
			h.ui.RenderError(w, r, http.StatusBadRequest, "Not deleted", "Tick the box to confirm the deletion.")
			return
		}
		if err := h.svc.DeleteWebhook(r.Context(), p.Actor, id); err != nil {
			h.fail(w, r, err)
			return
		}
		http.Redirect(w, r, "/admin/webhooks?done=webhook-deleted", http.StatusSeeOther)
		return
	default:
		http.NotFound(w, r)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/webhooks/"+id+"?done="+done, http.StatusSeeOther)
}

func (h *Handler) postReplay(w http.ResponseWriter, r *http.Request, p *page) {
	d, err := h.svc.ReplayDelivery(r.Context(), p.Actor, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	back := "/admin/webhooks?done=replayed"
	if d.EndpointID != "" && r.PostFormValue("back") == "endpoint" {
		back = "/admin/webhooks/" + d.EndpointID + "?done=replayed"
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

func checked(list []string, v string) bool { return slices.Contains(list, v) }
