package endpoint

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/linkslot/linkslot/internal/loopback"
)

// CORS (docs/reference.md §10), for MCP clients that run in a browser (the MCP
// Inspector, web IDEs):
//
//   - the metadata documents and the JWKS are public: any origin may read
//     them (Access-Control-Allow-Origin: *);
//   - the token, revocation, userinfo and registration endpoints (the
//     last under LINKSLOT_DCR_POLICY=open) answer an allowed
//     Origin — LINKSLOT_ALLOWED_ORIGINS, and in development any loopback
//     origin — by echoing it, with Vary: Origin; other origins get no CORS
//     headers, so the browser withholds the answer;
//   - OPTIONS preflights of these routes answer 204 without
//     authentication (403 for an origin that is not allowed).
//
// The answers expose WWW-Authenticate, so a browser client can read a
// challenge. Cookies are never involved: no Allow-Credentials.

const (
	corsAllowHeaders   = "Authorization, Content-Type, Accept, MCP-Protocol-Version, X-Request-Id"
	corsExposeHeaders  = "WWW-Authenticate, X-Request-Id, Retry-After"
	corsMaxAge         = "600"
	corsPublicMethods  = "GET, OPTIONS"
	corsEndpointMethod = "GET, POST, OPTIONS"
)

// publicCORS marks an answer readable by any origin.
func publicCORS(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", corsExposeHeaders)
		next(w, r)
	}
}

// publicPreflight answers the preflight of a public document.
func publicPreflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", corsPublicMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
}

// originAllowed reports whether a browser at origin may call the token,
// revocation and userinfo endpoints.
func (h *Handler) originAllowed(origin string) bool {
	o := strings.ToLower(strings.TrimSuffix(origin, "/"))
	for _, a := range h.d.AllowedOrigins {
		if strings.ToLower(strings.TrimSuffix(a, "/")) == o {
			return true
		}
	}
	if h.d.Development {
		u, err := url.Parse(o)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Path == "" && loopback.Host(u.Hostname())
	}
	return false
}

// endpointCORS echoes an allowed Origin on the answers of next.
func (h *Handler) endpointCORS(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		if o := r.Header.Get("Origin"); o != "" && h.originAllowed(o) {
			w.Header().Set("Access-Control-Allow-Origin", o)
			w.Header().Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		next(w, r)
	}
}

// endpointPreflight answers the preflight of the token, revocation and
// userinfo endpoints: 204 for an allowed origin, 403 otherwise.
func (h *Handler) endpointPreflight(w http.ResponseWriter, r *http.Request) {
	h.preflight(corsEndpointMethod)(w, r)
}

// preflight answers the preflight of a route that allows methods, as
// endpointPreflight does (the registration routes allow DELETE too).
func (h *Handler) preflight(methods string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Add("Vary", "Origin")
		o := r.Header.Get("Origin")
		if o == "" || !h.originAllowed(o) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		hd.Set("Access-Control-Allow-Origin", o)
		hd.Set("Access-Control-Allow-Methods", methods)
		hd.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		hd.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
	}
}
