package endpoint

import (
	"net/http"

	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
)

// redirectsPublic reports whether a client's redirect addresses are public
// knowledge, so that the page refusing one may list them
// (docs/reference.md §14): the demo client's are in the README and printed
// by `make run`, a metadata-document client publishes its own, and a
// dynamically registered client chose them itself, in a registration
// anyone could have made. An administrator's registration of any other
// client is not published.
func redirectsPublic(c store.Client) bool {
	return c.ID == demo.ClientID || cimd.IsURL(c.ID) || clients.IsDynamicID(c.ID)
}

// redirectRefused reports whether redirect (as the request names it) is
// not one the client may use: it is not registered (loopback: on any
// port), or none was named and the client has several.
func redirectRefused(c store.Client, redirect string) bool {
	if redirect == "" {
		return len(c.RedirectURIs) != 1
	}
	return !clients.MatchRedirect(c.RedirectURIs, redirect)
}

// refuseRedirect shows the page for a refused redirect address, never a
// redirect: it names the address refused (cut and cleaned, it is whatever
// the link says) and, for a client whose addresses are public, the ones
// allowed; otherwise it asks the person to have the app's developer
// register it.
func (h *Handler) refuseRedirect(w http.ResponseWriter, r *http.Request, c store.Client, urlClient *cimd.Client, redirect string) {
	v := consent.RedirectRefusal{ClientName: c.Name, Public: redirectsPublic(c)}
	if redirect != "" {
		v.Refused = consent.ShownRedirect(redirect)
	}
	if urlClient != nil {
		// The name is the document's own claim; the page names the app by
		// the host that vouches for it, as the consent page does.
		v.ClientName, v.Document = "The app at "+urlClient.Doc.Host(), c.ID
		h.d.Log.InfoContext(r.Context(), "url client refused", "client_id", c.ID, "rule", "redirect_uri_not_listed")
	}
	if v.Public {
		for _, u := range c.RedirectURIs {
			v.Allowed = append(v.Allowed, consent.AllowedRedirect{URL: u, AnyPort: clients.IsLoopbackRedirect(u)})
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	h.d.UI.RenderRedirectRefusal(w, r, http.StatusBadRequest, v)
}
