//go:build !unix

package rshttp_test

import "testing"

// lockPort does nothing here: the Node client tests that need a fixed port
// run where flock(2) is, and elsewhere the port's own bind decides.
func lockPort(t *testing.T, port int) {}
