package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
)

// Prefix is where the API is mounted.
const Prefix = "/admin/api/"

const maxJSONBody = 1 << 20

type api struct {
	svc  *admin.Service
	auth Authenticator
	log  *slog.Logger
	mux  *http.ServeMux
}

// NewAPI returns the admin API handler for paths under /admin/api/. A nil
// auth answers 401 to everything.
func NewAPI(svc *admin.Service, auth Authenticator, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &api{svc: svc, auth: auth, log: log, mux: http.NewServeMux()}
	routes := []struct {
		pattern string
		h       func(http.ResponseWriter, *http.Request, admin.Actor)
	}{
		{"GET /admin/api/clients", a.listClients},
		{"POST /admin/api/clients", a.createClient},
		{"GET /admin/api/clients/{id}", a.getClient},
		{"PATCH /admin/api/clients/{id}", a.updateClient},
		{"DELETE /admin/api/clients/{id}", a.deleteClient},
		{"POST /admin/api/clients/{id}/disable", a.disableClient},
		{"POST /admin/api/clients/{id}/enable", a.enableClient},
		{"POST /admin/api/clients/{id}/rotate-secret", a.rotateSecret},
		{"POST /admin/api/users", a.createUser},
		{"POST /admin/api/users/{email}/admin", a.setAdmin},
		{"GET /admin/api/users", a.listUsers},
		{"GET /admin/api/users/{email}", a.getUser},
		{"POST /admin/api/users/{email}/disable", a.disableUser},
		{"POST /admin/api/users/{email}/enable", a.enableUser},
		{"POST /admin/api/catalog", a.importCatalog},
		{"GET /admin/api/catalog", a.exportCatalog},
		{"GET /admin/api/businesses", a.listBusinesses},
		{"POST /admin/api/businesses/{ref}/agent-booking", a.agentBooking},
		{"GET /admin/api/businesses/{ref}/members", a.listMembers},
		{"POST /admin/api/businesses/{ref}/members", a.addMember},
		{"DELETE /admin/api/businesses/{ref}/members/{email}", a.removeMember},
		{"GET /admin/api/businesses/{ref}/staff/{staff}/calendar", a.getCalendar},
		{"PUT /admin/api/businesses/{ref}/staff/{staff}/calendar", a.putCalendar},
		{"DELETE /admin/api/businesses/{ref}/staff/{staff}/calendar", a.deleteCalendar},
		{"POST /admin/api/businesses/{ref}/staff/{staff}/calendar/sync", a.syncCalendar},
		{"GET /admin/api/businesses/{ref}/reminders", a.getReminders},
		{"PUT /admin/api/businesses/{ref}/reminders", a.putReminders},
		{"GET /admin/api/audit", a.listAudit},
		{"GET /admin/api/webhooks", a.listWebhooks},
		{"POST /admin/api/webhooks", a.createWebhook},
		{"GET /admin/api/webhooks/deliveries", a.listDeliveries},
		{"POST /admin/api/webhooks/deliveries/{id}/replay", a.replayDelivery},
		{"GET /admin/api/webhooks/{id}", a.getWebhook},
		{"PATCH /admin/api/webhooks/{id}", a.updateWebhook},
		{"DELETE /admin/api/webhooks/{id}", a.deleteWebhook},
		{"POST /admin/api/webhooks/{id}/disable", a.disableWebhook},
		{"POST /admin/api/webhooks/{id}/enable", a.enableWebhook},
		{"POST /admin/api/webhooks/{id}/rotate-secret", a.rotateWebhookSecret},
		{"GET /admin/api/webhooks/{id}/deliveries", a.webhookDeliveries},
	}
	for _, rt := range routes {
		a.mux.Handle(rt.pattern, a.guard(rt.h))
	}
	return a
}

// ServeHTTP authenticates every request before routing it, so that an
// unauthenticated caller learns nothing, not even which paths exist.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	var actor string
	ok := false
	if a.auth != nil {
		actor, ok = a.auth.Admin(r)
	}
	if !ok {
		if id, isID := a.auth.(identifier); isID && id.Identified(r) {
			writeError(w, http.StatusForbidden, problem.CodeForbidden, "this account is not an administrator", nil)
			return
		}
		h.Set("WWW-Authenticate", `Bearer realm="linkslot-admin"`)
		writeError(w, http.StatusUnauthorized, problem.CodeUnauthorized, "administrator authentication required: an admin bearer token or an administrator's session", nil)
		return
	}
	ctx := withActor(r.Context(), actor)
	if requestid.From(ctx) == "" {
		id := r.Header.Get(requestid.Header)
		if !requestid.Valid(id) {
			id = requestid.New()
		}
		ctx = requestid.With(ctx, id)
		h.Set(requestid.Header, id)
	}
	r = r.WithContext(ctx)
	if h, pattern := a.mux.Handler(r); pattern == "" {
		// Not found or method not allowed: let the mux decide, answer in JSON.
		probe := &statusProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.header.Get("Allow"))
			writeError(w, http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed, "this route does not accept "+r.Method, nil)
			return
		}
		writeError(w, http.StatusNotFound, problem.CodeNotFound, "no such admin API route", nil)
		return
	}
	a.mux.ServeHTTP(w, r)
}

func (a *api) guard(fn func(http.ResponseWriter, *http.Request, admin.Actor)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fn(w, r, admin.Actor{ID: actorFrom(r.Context()), RequestID: requestid.From(r.Context())})
	})
}

// ---- errors ----

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code     string          `json:"code"`
	Message  string          `json:"message"`
	Problems []admin.Problem `json:"problems,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, msg string, problems []admin.Problem) {
	writeJSON(w, status, errorBody{errorDetail{Code: code, Message: msg, Problems: problems}})
}

// fail answers err: the service's errors by kind, anything else as
// server_error, logged.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	ps, invalid := admin.ProblemsOf(err)
	switch {
	case invalid:
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "the request was refused; see problems", ps)
	case errors.Is(err, admin.ErrNotFound):
		writeError(w, http.StatusNotFound, problem.CodeNotFound, messageOf(err), nil)
	case errors.Is(err, admin.ErrAlreadyExists):
		writeError(w, http.StatusConflict, problem.CodeAlreadyExists, messageOf(err), nil)
	case errors.Is(err, admin.ErrConflict):
		writeError(w, http.StatusConflict, problem.CodeConflict, messageOf(err), nil)
	default:
		a.log.ErrorContext(r.Context(), "admin api", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, problem.CodeServerError, "the server could not complete the request; nothing was changed", nil)
	}
}

// messageOf is a domain error's message, as the service wrote it.
func messageOf(err error) string {
	if e, ok := problem.As(err); ok {
		return e.Message
	}
	return err.Error()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// decode reads a JSON body strictly (unknown fields refused).
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && catalogfile.NormalizeFormat(ct) != catalogfile.FormatJSON {
		writeError(w, http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType, "send application/json", nil)
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidJSON, "the body is not the expected JSON: "+jsonProblem(err), nil)
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidJSON, "the body has data after the JSON object", nil)
		return false
	}
	return true
}

func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &te):
		return fmt.Sprintf("field %q must be %s", te.Field, te.Type.String())
	case errors.As(err, &mbe):
		return "it is too large"
	case errors.Is(err, io.EOF):
		return "it is empty"
	}
	return err.Error()
}

// writePage answers one page of a list: {key: items, "has_more", and
// "next_offset" when there are more}.
func writePage(w http.ResponseWriter, key string, items any, n int, more bool, offset int) {
	body := map[string]any{key: items, "has_more": more}
	if more {
		body["next_offset"] = offset + n
	}
	writeJSON(w, http.StatusOK, body)
}

// pageParams reads limit (1–200, default 50) and offset (default 0) from
// the query, answering 400 with every problem when they are not numbers in
// range.
func pageParams(w http.ResponseWriter, r *http.Request) (limit, offset int, ok bool) {
	q := r.URL.Query()
	var problems []admin.Problem
	limit, problems = limitParam(q, 50, 200, problems)
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			problems = append(problems, admin.Problem{Path: "offset", Message: "must be a whole number, 0 or more"})
		}
		offset = n
	}
	if len(problems) > 0 {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "the request was refused; see problems", problems)
		return 0, 0, false
	}
	return limit, offset, true
}

// limitParam reads q's limit (1 to max, def when absent), adding a problem
// to problems when it is not one.
func limitParam(q url.Values, def, max int, problems []admin.Problem) (int, []admin.Problem) {
	v := q.Get("limit")
	if v == "" {
		return def, problems
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		problems = append(problems, admin.Problem{Path: "limit", Message: fmt.Sprintf("must be a whole number from 1 to %d", max)})
	}
	return n, problems
}

// statusProbe records the status a handler would answer, discarding the body.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(status int)      { p.status = status }

type actorKey struct{}

func withActor(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, actorKey{}, id)
}

func actorFrom(ctx context.Context) string {
	id, _ := ctx.Value(actorKey{}).(string)
	return id
}
