package scope

import (
	"slices"
	"testing"
)

func TestExpandAndCovers(t *testing.T) {
	got := Expand([]string{BookingsWrite, OpenID, BookingsWrite})
	want := []string{OpenID, BookingsRead, BookingsWrite}
	if !slices.Equal(got, want) {
		t.Fatalf("Expand = %v, want %v", got, want)
	}
	if !Has([]string{BookingsWrite}, BookingsRead) {
		t.Error("bookings:write must imply bookings:read")
	}
	if Has([]string{BookingsRead}, BookingsWrite) {
		t.Error("bookings:read must not imply bookings:write")
	}
	if !Covers([]string{OpenID, BookingsWrite}, []string{BookingsRead, OpenID}) {
		t.Error("Covers missed an implied scope")
	}
	if slices.Contains(Public(), BookingsRead) || slices.Contains(Public(), BookingsWrite) {
		t.Error("booking scopes must never be advertised")
	}
	if !slices.Equal(Public(), []string{OpenID, Profile, Email, OfflineAccess}) {
		t.Errorf("Public = %v", Public())
	}
}
