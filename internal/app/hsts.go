package app

import "net/http"

// HSTS is the Strict-Transport-Security every answer carries in production
// (docs/reference.md §13): browsers keep to https for two years, on the
// issuer's and the resource's subdomains too.
const HSTS = "max-age=63072000; includeSubDomains"

// StrictTransport sets HSTS on every answer of h when production is set
// (LINKSLOT_ENV=production, where the issuer and the resource are https);
// in development, served over plain http on loopback, h is returned as is.
// The header is set before h runs, so even an answer h writes early (a
// refusal, a panic's 500) carries it.
func StrictTransport(production bool, h http.Handler) http.Handler {
	if !production {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", HSTS)
		h.ServeHTTP(w, r)
	})
}
