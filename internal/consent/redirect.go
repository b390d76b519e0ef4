package consent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxShownRedirect is how much of a refused redirect address the error page
// shows: the address is whatever the link that brought the person here
// says, so it is cut (and its control and formatting characters replaced)
// before it is shown.
const MaxShownRedirect = 200

// RedirectRefusal is the error page for an authorization request whose
// redirect_uri the client may not use (docs/reference.md §14): it names the
// address refused and, for a client whose addresses are public (the demo
// client, metadata documents, dynamic registrations), the addresses it
// may use. The endpoint never redirects to the refused address.
type RedirectRefusal struct {
	ClientName string
	// Refused is the address asked for, as ShownRedirect makes it; empty
	// when the request named none and the client has several.
	Refused string
	// Public: the client's addresses are public, and Allowed lists them.
	// Otherwise they are not shown, and the page asks the person to tell
	// the app's developer.
	Public  bool
	Allowed []AllowedRedirect
	// Document is the URL of the metadata document that lists Allowed,
	// for a client identified by one.
	Document string
}

// AllowedRedirect is one registered redirect address. AnyPort: a loopback
// address (http on 127.0.0.1, [::1] or localhost), which matches with any
// port (RFC 8252 §7.3).
type AllowedRedirect struct {
	URL     string
	AnyPort bool
}

// Title is the page's heading.
func (v RedirectRefusal) Title() string { return "Invalid redirect address" }

// Name is who asked: the client's name, or "The app".
func (v RedirectRefusal) Name() string {
	if v.ClientName == "" {
		return "The app"
	}
	return v.ClientName
}

// What says what was refused (the page's template says the same with the
// address set apart).
func (v RedirectRefusal) What() string {
	if v.Refused == "" {
		return v.Name() + " did not say where to send you back, and it has several addresses, so Linkslot cannot choose one. Nothing was shared."
	}
	return v.Name() + " asked Linkslot to send you back to " + v.Refused + ", which is not an address it may use. Nothing was shared."
}

// LoopbackRule is the any-port rule in words, for a list that holds a
// loopback address.
const LoopbackRule = "An address on this computer (http://127.0.0.1, http://[::1] or http://localhost) matches with any port; the rest of it, path included, must match exactly."

// HasAnyPort reports whether an allowed address is a loopback one.
func (v RedirectRefusal) HasAnyPort() bool {
	for _, a := range v.Allowed {
		if a.AnyPort {
			return true
		}
	}
	return false
}

// Next says what to do about it.
func (v RedirectRefusal) Next() string {
	switch {
	case !v.Public:
		return "Ask the app's developer to register it: an administrator of this Linkslot server adds the address to the app's registration."
	case v.Document != "":
		return "These are the addresses the app's description at " + v.Document + " lists. Ask the app's developer to add this one to it, or to send you back to one of them."
	}
	return "If you are the app's developer, send people back to one of these addresses."
}

// Message is the whole page as one paragraph, for a UI without
// RenderRedirectRefusal.
func (v RedirectRefusal) Message() string {
	parts := []string{v.What()}
	if v.Public && len(v.Allowed) > 0 {
		list := make([]string, len(v.Allowed))
		for i, a := range v.Allowed {
			list[i] = a.URL
			if a.AnyPort {
				list[i] += " (any port)"
			}
		}
		parts = append(parts, "It may use: "+strings.Join(list, ", ")+".")
		if v.HasAnyPort() {
			parts = append(parts, LoopbackRule)
		}
	}
	return strings.Join(append(parts, v.Next()), " ")
}

// ShownRedirect is a requested redirect address as an error page may show
// it: control and invisible formatting characters (bidirectional
// overrides among them) replaced by U+FFFD, and cut to MaxShownRedirect
// characters with an ellipsis. The page escapes it as HTML as usual.
func ShownRedirect(raw string) string {
	var b strings.Builder
	n := 0
	for i, r := range raw {
		if n == MaxShownRedirect {
			if i < len(raw) {
				b.WriteString("…")
			}
			break
		}
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
