package consentui

import (
	"net/http"
	"slices"

	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/textout"
)

// The consent page.

// consentData is the consent page's model.
type consentData struct {
	consent.ConsentView
	Hidden      []hiddenField
	SignOutNext string
}

type hiddenField struct{ Name, Value string }

// RenderConsent shows the consent page.
func (u *UI) RenderConsent(w http.ResponseWriter, r *http.Request, cv consent.ConsentView) {
	// A name from outside (a metadata document, a registration) shows
	// without bidi controls, and the templates isolate it in <bdi>, so it
	// cannot reorder the text after it (docs/reference.md §10).
	cv.ClientName = textout.StripBidi(textout.OneLine(cv.ClientName))
	d := consentData{ConsentView: cv}
	keys := make([]string, 0, len(cv.Params))
	for k := range cv.Params {
		if k != consent.CSRFField && k != "decision" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range cv.Params[k] {
			d.Hidden = append(d.Hidden, hiddenField{k, v})
		}
	}
	if cv.CSRFToken == "" {
		d.CSRFToken = u.CSRFToken(w, r)
	}
	if SafeNext(cv.Action) {
		n := cv.Action
		if len(cv.Params) > 0 {
			n += "?" + cv.Params.Encode()
		}
		if SafeNext(n) {
			d.SignOutNext = n
		}
	}
	v := view{Title: "Connect " + cv.ClientName, CSRF: d.CSRFToken, Data: d}
	if acct, ok := u.CurrentAccount(r); ok {
		v.Account = &acct
	}
	u.render(w, r, http.StatusOK, "consent", v, formTargetsFor(cv.Params.Get("redirect_uri")))
}
