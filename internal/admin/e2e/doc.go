// Package e2e holds end-to-end tests of administration against the whole
// authorization server (authserver/authhttp with the real consent UI) in a
// real headless Chromium: an administrator signs in, registers a public
// client on the admin pages, and that client then completes an
// authorization-code flow with PKCE; once disabled, it is refused. The
// package has no non-test code; it exists so that internal/admin and its
// pages do not import the server they are mounted in.
package e2e
