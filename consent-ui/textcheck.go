package consentui

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/linkslot/linkslot/internal/textcheck"
)

// controlCharError is the form error for a posted field holding a control
// character (internal/textcheck; PostgreSQL cannot store U+0000, SQLite
// can), or "" when the form is clean. Passwords are not checked: they are
// only ever hashed; nor is "next", which nextParam sanitizes. Fields named
// in multiline may carry tab, CR and LF.
func controlCharError(r *http.Request, multiline ...string) string {
	if err := r.ParseForm(); err != nil {
		return ""
	}
	form := make(url.Values, len(r.PostForm))
	for k, v := range r.PostForm {
		if k != "next" { // sanitized by nextParam, never stored
			form[k] = v
		}
	}
	field, _, bad := textcheck.Form(form, multiline...)
	if !bad {
		return ""
	}
	return fmt.Sprintf("The %q field contains a control character (such as U+0000). Remove it and try again.", field)
}
