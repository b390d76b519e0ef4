package app

import (
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestNewAuthServices: every service once, the mutation service over the
// process's one booking engine and outbox; a missing part is named.
func TestNewAuthServices(t *testing.T) {
	s := sqltest.SQLite(t)
	key := []byte(strings.Repeat("k", 32))
	for _, tt := range []struct {
		name    string
		cfg     config.Config
		store   store.Store
		wantErr string
	}{
		{"complete", config.Config{Issuer: "https://auth.linkslot.test", SecretKey: key}, s, ""},
		{"no store", config.Config{Issuer: "https://auth.linkslot.test", SecretKey: key}, nil, "need a store"},
		{"no issuer", config.Config{SecretKey: key}, s, "issuer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc, err := NewAuthServices(tt.cfg, tt.store, ServiceOptions{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("%v, want an error naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if svc.Identity == nil || svc.Passkeys == nil || svc.Bookings == nil || svc.Notifications == nil || svc.Feeds == nil {
				t.Fatalf("services %+v", svc)
			}
			if svc.Mutations.Engine != svc.Bookings || svc.Mutations.Notifier != svc.Notifications.Notifier || svc.Mutations.Grants != nil {
				t.Fatalf("the mutation service is not over the process's engine and outbox: %+v", svc.Mutations)
			}
		})
	}
}
