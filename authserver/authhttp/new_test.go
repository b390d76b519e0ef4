package authhttp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestNewRefusesMissingParts: New builds no service it is not given; a
// missing part is named.
func TestNewRefusesMissingParts(t *testing.T) {
	s := sqltest.SQLite(t)
	cfg := config.Config{Issuer: "http://127.0.0.1:8080", Resource: "http://127.0.0.1:8081/mcp",
		SecretKey: []byte("test-secret-key-test-secret-key-0123")}
	dcrOpen := cfg
	dcrOpen.DCRPolicy = "open"
	feeds, err := feed.New(s, cfg.SecretKey, cfg.Issuer, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		d    authhttp.Deps
		want string
	}{
		{"complete", authhttp.Deps{Store: s, Config: cfg, UI: testUI{s}, Feeds: feeds}, ""},
		{"no UI", authhttp.Deps{Store: s, Config: cfg, Feeds: feeds}, "Store and UI are required"},
		{"no feeds", authhttp.Deps{Store: s, Config: cfg, UI: testUI{s}}, "Feeds is required"},
		{"no resource", authhttp.Deps{Store: s, Config: config.Config{Issuer: cfg.Issuer, SecretKey: cfg.SecretKey}, UI: testUI{s}, Feeds: feeds},
			"Config.Issuer and Config.Resource are required"},
		{"short secret key", authhttp.Deps{Store: s, Config: config.Config{Issuer: cfg.Issuer, Resource: cfg.Resource, SecretKey: []byte("short")},
			UI: testUI{s}, Feeds: feeds}, "at least 32 bytes"},
		{"dynamic registration with its store", authhttp.Deps{Store: s, Config: dcrOpen, UI: testUI{s}, Feeds: feeds, DCRStore: s}, ""},
		{"dynamic registration without its store", authhttp.Deps{Store: s, Config: dcrOpen, UI: testUI{s}, Feeds: feeds},
			"LINKSLOT_DCR_POLICY=open needs Deps.DCRStore"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := authhttp.New(context.Background(), tt.d)
			if tt.want == "" {
				if err != nil || h == nil {
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
