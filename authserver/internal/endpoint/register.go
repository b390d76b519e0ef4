package endpoint

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/linkslot/linkslot/internal/authheader"
	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/problem"
)

// Dynamic client registration (RFC 7591) and its management (RFC 7592),
// docs/reference.md §14: mounted only under LINKSLOT_DCR_POLICY=open, when
// the metadata documents advertise PathRegister as registration_endpoint.
// A client's registration client URI is PathRegister/{client_id}: GET
// answers the registration, DELETE removes the client, both with the
// registration access token as a bearer token; PUT (updates) is not
// offered. The routes answer browsers as the token endpoint does (cors.go).

// PathRegister is the registration endpoint.
const PathRegister = "/oauth2/register"

// corsRegisterMethods are the methods the registration routes allow.
const corsRegisterMethods = "GET, POST, DELETE, OPTIONS"

func (h *Handler) mountRegistration(mux *http.ServeMux) {
	if h.d.Registrations == nil {
		return
	}
	gate := h.d.Gate.Handler
	pre := h.preflight(corsRegisterMethods)
	mux.HandleFunc("OPTIONS "+PathRegister, pre)
	mux.HandleFunc("OPTIONS "+PathRegister+"/{client_id}", pre)
	mux.HandleFunc("POST "+PathRegister, h.endpointCORS(gate(h.register)))
	mux.HandleFunc("GET "+PathRegister+"/{client_id}", h.endpointCORS(gate(h.readRegistration)))
	mux.HandleFunc("DELETE "+PathRegister+"/{client_id}", h.endpointCORS(gate(h.deleteRegistration)))
	mux.HandleFunc("PUT "+PathRegister+"/{client_id}", h.endpointCORS(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, DELETE")
		writeJSONError(w, oauthError{"invalid_request", "Updating a registration is not supported: register the client again " +
			"and DELETE this registration.", http.StatusMethodNotAllowed})
	}))
}

// RegistrationClientURI is the registration client URI (RFC 7592) of a
// dynamically registered client.
func RegistrationClientURI(issuer, clientID string) string {
	return issuer + PathRegister + "/" + clientID
}

func (h *Handler) register(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeRegistrationError(w, dcr.CodeInvalidClientMetadata, "Send the client metadata as a JSON object with Content-Type: application/json (RFC 7591 §3.1).")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, dcr.MaxBodyBytes+1))
	if err != nil {
		writeRegistrationError(w, dcr.CodeInvalidClientMetadata, "The registration request could not be read.")
		return
	}
	addr := clientaddr.From(ctx)
	reg, err := h.d.Registrations.Register(ctx, body, addr)
	var bad *dcr.Error
	var limited *dcr.RateLimited
	switch {
	case errors.As(err, &bad):
		h.d.Log.InfoContext(ctx, "dynamic registration refused", "error", bad.Code)
		writeRegistrationError(w, bad.Code, bad.Description)
		return
	case errors.As(err, &limited):
		secs := int(limited.RetryAfter.Seconds())
		h.d.Log.InfoContext(ctx, "dynamic registration rate limited", "retry_after_sec", secs)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeJSONError(w, oauthError{problem.CodeRateLimited, fmt.Sprintf("Too many clients registered from this address in the last hour. "+
			"Retry after %d seconds, or reuse a client already registered.", secs), http.StatusTooManyRequests})
		return
	case err != nil:
		h.serverError(w, r, err)
		return
	}
	h.d.Log.InfoContext(ctx, "client registered dynamically", "client_id", reg.ClientID, "client_name", reg.ClientName,
		"token_endpoint_auth_method", reg.TokenEndpointAuthMethod)
	w.Header().Set("Pragma", "no-cache")
	w.Header().Set("Location", reg.RegistrationClientURI)
	writeJSON(w, http.StatusCreated, reg)
}

func (h *Handler) readRegistration(w http.ResponseWriter, r *http.Request) {
	tok, ok := registrationToken(w, r)
	if !ok {
		return
	}
	reg, err := h.d.Registrations.Read(r.Context(), r.PathValue("client_id"), tok)
	if err != nil {
		h.registrationFailed(w, r, err)
		return
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, reg)
}

func (h *Handler) deleteRegistration(w http.ResponseWriter, r *http.Request) {
	tok, ok := registrationToken(w, r)
	if !ok {
		return
	}
	id := r.PathValue("client_id")
	if err := h.d.Registrations.Delete(r.Context(), id, tok, clientaddr.From(r.Context())); err != nil {
		h.registrationFailed(w, r, err)
		return
	}
	h.d.Log.InfoContext(r.Context(), "dynamic registration deleted by its client", "client_id", id)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// registrationToken reads the registration access token, answering 401
// when there is none.
func registrationToken(w http.ResponseWriter, r *http.Request) (string, bool) {
	tok, err := authheader.ParseBearer(r.Header.Get("Authorization"))
	if err != nil {
		unauthorizedRegistration(w)
		return "", false
	}
	return tok, true
}

func (h *Handler) registrationFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, dcr.ErrUnauthorized) {
		unauthorizedRegistration(w)
		return
	}
	h.serverError(w, r, err)
}

// unauthorizedRegistration is RFC 7592 §2's answer to a missing or wrong
// registration access token, and to a client that does not exist.
func unauthorizedRegistration(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	writeJSONError(w, oauthError{"invalid_token", "Send the registration access token that the registration answered, " +
		"as Authorization: Bearer <token>, to the registration_client_uri it answered.", http.StatusUnauthorized})
}

func writeRegistrationError(w http.ResponseWriter, code, description string) {
	writeJSONError(w, oauthError{code, description, http.StatusBadRequest})
}
