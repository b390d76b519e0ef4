// Package scope is the scope vocabulary both servers and the consent pages
// share: which scopes exist, which are advertised, what each lets a client
// do in plain language, and which scopes imply others.
//
// Public scopes (openid, profile, email, offline_access) are listed in the
// discovery documents. The booking scopes are private: granted per client by
// an administrator and never advertised. bookings:write implies
// bookings:read.
package scope

import (
	"slices"
	"strings"
)

// The scope vocabulary.
const (
	OpenID        = "openid"
	Profile       = "profile"
	Email         = "email"
	OfflineAccess = "offline_access"
	BookingsRead  = "bookings:read"
	BookingsWrite = "bookings:write"
)

// Scope describes one scope.
type Scope struct {
	Name        string
	Public      bool   // advertised in scopes_supported
	Description string // what the person allows, in plain language
}

var vocabulary = []Scope{
	{OpenID, true, "Confirm that it is you, by your Linkslot account"},
	{Profile, true, "See your name"},
	{Email, true, "See your email address"},
	{OfflineAccess, true, "Stay connected until you disconnect it"},
	{BookingsRead, false, "See your bookings and check availability"},
	{BookingsWrite, false, "Book, move and cancel appointments, each only after you confirm"},
}

// All returns the whole vocabulary in display order.
func All() []Scope { return slices.Clone(vocabulary) }

// Public returns the names of the advertised scopes.
func Public() []string {
	var out []string
	for _, s := range vocabulary {
		if s.Public {
			out = append(out, s.Name)
		}
	}
	return out
}

// Known reports whether name is in the vocabulary.
func Known(name string) bool {
	_, ok := Lookup(name)
	return ok
}

// Lookup returns a scope by name.
func Lookup(name string) (Scope, bool) {
	for _, s := range vocabulary {
		if s.Name == name {
			return s, true
		}
	}
	return Scope{}, false
}

// Expand adds implied scopes (bookings:write implies bookings:read) and
// returns the set sorted in vocabulary order without duplicates.
func Expand(names []string) []string {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
		if n == BookingsWrite {
			set[BookingsRead] = true
		}
	}
	return Ordered(set)
}

// Has reports whether granted (after expansion) includes want.
func Has(granted []string, want string) bool {
	return slices.Contains(Expand(granted), want)
}

// Covers reports whether granted (after expansion) includes every scope of want.
func Covers(granted, want []string) bool {
	g := Expand(granted)
	for _, w := range want {
		if !slices.Contains(g, w) {
			return false
		}
	}
	return true
}

// Ordered returns the names in a set in vocabulary order, unknown names last
// in lexical order.
func Ordered(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for _, s := range vocabulary {
		if set[s.Name] {
			out = append(out, s.Name)
		}
	}
	var unknown []string
	for n := range set {
		if !Known(n) {
			unknown = append(unknown, n)
		}
	}
	slices.Sort(unknown)
	return append(out, unknown...)
}

// Parse splits a space-delimited scope parameter.
func Parse(s string) []string { return strings.Fields(s) }

// Join formats scopes as a space-delimited parameter.
func Join(names []string) string { return strings.Join(names, " ") }
