package consentui_test

import (
	"strings"
	"testing"

	consentui "github.com/linkslot/linkslot/consent-ui"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestNewRefusesMissingServices: the pages build none of their services;
// a missing one is named, not replaced.
func TestNewRefusesMissingServices(t *testing.T) {
	s := sqltest.SQLite(t)
	key := []byte(strings.Repeat("k", 32))
	svc, err := app.NewAuthServices(config.Config{Issuer: "http://127.0.0.1:8080", SecretKey: key}, s, app.ServiceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	full := consentui.Config{Store: s, SecretKey: key, Issuer: "http://127.0.0.1:8080"}.WithServices(svc)
	for _, tt := range []struct {
		name string
		edit func(*consentui.Config)
		want string
	}{
		{"complete", func(*consentui.Config) {}, ""},
		{"no store", func(c *consentui.Config) { c.Store = nil }, "Config.Store is required"},
		{"short secret key", func(c *consentui.Config) { c.SecretKey = key[:16] }, "at least 32 bytes"},
		{"no identity service", func(c *consentui.Config) { c.Identity = nil }, "Config.Identity is required"},
		{"no passkey service", func(c *consentui.Config) { c.Passkeys = nil }, "Config.Passkeys is required"},
		{"no booking engine", func(c *consentui.Config) { c.Bookings = nil }, "Config.Bookings is required"},
		{"no feeds, no mutations: optional", func(c *consentui.Config) { c.Feeds, c.Mutations = nil, nil }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := full
			tt.edit(&c)
			ui, err := consentui.New(c)
			if tt.want == "" {
				if err != nil || ui == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want %q", err, tt.want)
			}
		})
	}
}
