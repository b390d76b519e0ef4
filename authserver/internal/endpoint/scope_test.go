package endpoint

import (
	"reflect"
	"testing"

	"github.com/ory/fosite"

	"github.com/linkslot/linkslot/internal/store"
)

func TestGrantedScopes(t *testing.T) {
	c := store.Client{AllowedScopes: []string{"openid", "email", "bookings:read", "bookings:write"},
		DefaultScopes: []string{"bookings:read"}}
	noOpenID := store.Client{AllowedScopes: []string{"bookings:read"}, DefaultScopes: []string{"bookings:read"}}
	tests := []struct {
		name      string
		client    store.Client
		requested fosite.Arguments
		want      []string
	}{
		{"openid alone gets the defaults", c, fosite.Arguments{"openid"}, []string{"openid", "bookings:read"}},
		{"nothing gets openid and the defaults", c, nil, []string{"openid", "bookings:read"}},
		{"nothing, client without openid", noOpenID, nil, []string{"bookings:read"}},
		{"explicit request exactly", c, fosite.Arguments{"openid", "bookings:write"}, []string{"openid", "bookings:write"}},
		{"explicit without openid", c, fosite.Arguments{"email"}, []string{"email"}},
		{"duplicates collapse, public scopes with openid get the defaults", c, fosite.Arguments{"email", "email", "openid"}, []string{"openid", "email", "bookings:read"}},
		{"openid offline_access gets the defaults", c, fosite.Arguments{"openid", "offline_access"}, []string{"openid", "offline_access", "bookings:read"}},
		{"a private scope is taken exactly", c, fosite.Arguments{"openid", "offline_access", "bookings:write"}, []string{"openid", "offline_access", "bookings:write"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := grantedScopes(tt.requested, tt.client); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
