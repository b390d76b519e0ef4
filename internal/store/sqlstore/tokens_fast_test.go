package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/storetest"
)

func TestTokenBatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := store.UTC(time.Now()).Truncate(time.Second)
		sess := func(kind store.TokenKind, req string) store.TokenSession {
			return store.TokenSession{Kind: kind, SignatureHash: store.RandomString(12), RequestID: req, ClientID: "c",
				AccountID: "a", Active: true, Request: []byte(`{"x":1}`), ExpiresAt: now.Add(time.Hour), CreatedAt: now}
		}
		ref := func(t store.TokenSession) store.TokenRef {
			return store.TokenRef{Kind: t.Kind, SignatureHash: t.SignatureHash}
		}
		code, pkce, oidc := sess(store.KindAuthorizeCode, "r1"), sess(store.KindPKCE, "r1"), sess(store.KindOpenID, "r1")
		if err := s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{code, pkce, oidc}}); err != nil {
			t.Fatal(err)
		}
		rows, err := s.GetRequestTokenSessions(ctx, code.Kind, code.SignatureHash, store.KindPKCE, store.KindOpenID)
		if err != nil || len(rows) != 3 || rows[0].SignatureHash != code.SignatureHash || string(rows[0].Request) != `{"x":1}` ||
			!rows[0].ExpiresAt.Equal(code.ExpiresAt) {
			t.Fatalf("request sessions: %v %+v", err, rows)
		}
		if _, err := s.GetRequestTokenSessions(ctx, code.Kind, "missing", store.KindPKCE); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing: %v", err)
		}

		at, rt := sess(store.KindAccessToken, "r1"), sess(store.KindRefreshToken, "r1")
		redeem := store.TokenBatch{Deactivate: []store.TokenRef{ref(code)}, Create: []store.TokenSession{at, rt}, Delete: []store.TokenRef{ref(oidc)}}
		if err := s.ApplyTokenBatch(ctx, redeem); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetTokenSession(ctx, code.Kind, code.SignatureHash); got.Active {
			t.Fatal("code still active")
		}
		if _, err := s.GetTokenSession(ctx, oidc.Kind, oidc.SignatureHash); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted session: %v", err)
		}
		// A second redemption conflicts and writes nothing.
		at2 := sess(store.KindAccessToken, "r1")
		again := store.TokenBatch{Deactivate: []store.TokenRef{ref(code)}, Create: []store.TokenSession{at2}, Delete: []store.TokenRef{ref(pkce)}}
		if err := s.ApplyTokenBatch(ctx, again); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second redemption: %v", err)
		}
		if _, err := s.GetTokenSession(ctx, at2.Kind, at2.SignatureHash); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("loser's session written: %v", err)
		}
		if _, err := s.GetTokenSession(ctx, pkce.Kind, pkce.SignatureHash); err != nil {
			t.Fatalf("loser's delete applied: %v", err)
		}
		if err := s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{{Kind: store.KindRefreshToken, SignatureHash: "nope"}}}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown session: %v", err)
		}
		// A duplicate signature fails the whole batch.
		dup := sess(store.KindRefreshToken, "r1")
		dup.SignatureHash = rt.SignatureHash
		rt2 := sess(store.KindRefreshToken, "r1")
		if err := s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{ref(rt)}, Create: []store.TokenSession{rt2, dup}}); err == nil {
			t.Fatal("duplicate accepted")
		}
		if got, _ := s.GetTokenSession(ctx, rt.Kind, rt.SignatureHash); !got.Active {
			t.Fatal("failed batch deactivated its token")
		}

		// The refresh session with its link.
		_, ls, err := s.GetTokenSessionLink(ctx, rt.Kind, rt.SignatureHash)
		if err != nil || ls.Found {
			t.Fatalf("no link: %v %+v", err, ls)
		}
		acct := store.Account{ID: store.NewID("acc"), Email: store.RandomString(5) + "@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
		if err := s.CreateAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		cl := store.Client{ID: "c", Name: "c", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"}, AllowedScopes: []string{"openid"},
			GrantTypes: []string{"authorization_code"}, CreatedAt: now, UpdatedAt: now}
		if err := s.CreateClient(ctx, cl); err != nil {
			t.Fatal(err)
		}
		link, err := s.UpsertLink(ctx, acct.ID, "c", []string{"openid"}, now)
		if err != nil {
			t.Fatal(err)
		}
		linked := sess(store.KindRefreshToken, "r2")
		linked.LinkID = link.ID
		if err := s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{linked}}); err != nil {
			t.Fatal(err)
		}
		got, ls, err := s.GetTokenSessionLink(ctx, linked.Kind, linked.SignatureHash)
		if err != nil || !ls.Found || ls.Status != store.LinkActive || !ls.LastUsedAt.Equal(link.LastUsedAt) || got.LinkID != link.ID {
			t.Fatalf("linked: %v %+v %+v (link %+v)", err, ls, got, link)
		}
		if err := s.RevokeLink(ctx, link.ID, now); err != nil {
			t.Fatal(err)
		}
		if _, ls, _ := s.GetTokenSessionLink(ctx, linked.Kind, linked.SignatureHash); ls.Status != store.LinkRevoked {
			t.Fatalf("revoked link: %+v", ls)
		}
		if _, _, err := s.GetTokenSessionLink(ctx, linked.Kind, "missing"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing: %v", err)
		}
	})
}

func TestPrefetchTokenRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := store.UTC(time.Now()).Truncate(time.Second)
		cl := store.Client{ID: "app", Name: "App", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
			AllowedScopes: []string{"openid", "profile"}, GrantTypes: []string{"authorization_code", "refresh_token"}, CreatedAt: now, UpdatedAt: now}
		if err := s.CreateClient(ctx, cl); err != nil {
			t.Fatal(err)
		}
		sess := func(kind store.TokenKind, req string) store.TokenSession {
			return store.TokenSession{Kind: kind, SignatureHash: store.RandomString(12), RequestID: req, ClientID: "app",
				AccountID: "a", Active: true, Request: []byte(`{"y":2}`), ExpiresAt: now.Add(time.Hour), CreatedAt: now}
		}
		code, pkce, oidc, other := sess(store.KindAuthorizeCode, "r1"), sess(store.KindPKCE, "r1"), sess(store.KindOpenID, "r1"), sess(store.KindPKCE, "r2")
		if err := s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{code, pkce, oidc, other}}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name       string
			client     string
			kind       store.TokenKind
			sig        string
			also       []store.TokenKind
			wantClient bool
			wantKinds  []store.TokenKind
		}{
			{"code with companions", "app", code.Kind, code.SignatureHash, []store.TokenKind{store.KindPKCE, store.KindOpenID}, true,
				[]store.TokenKind{store.KindAuthorizeCode, store.KindPKCE, store.KindOpenID}},
			{"code alone", "app", code.Kind, code.SignatureHash, nil, true, []store.TokenKind{store.KindAuthorizeCode}},
			{"unknown client", "nobody", code.Kind, code.SignatureHash, nil, false, []store.TokenKind{store.KindAuthorizeCode}},
			{"unknown session", "app", code.Kind, "missing", []store.TokenKind{store.KindPKCE}, true, nil},
			{"neither", "nobody", store.KindRefreshToken, "missing", nil, false, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p, err := s.PrefetchTokenRequest(ctx, tt.client, tt.kind, tt.sig, tt.also...)
				if err != nil {
					t.Fatal(err)
				}
				if p.ClientFound != tt.wantClient || tt.wantClient && (p.Client.Name != "App" || len(p.Client.AllowedScopes) != 2 || !p.Client.CreatedAt.Equal(now)) {
					t.Fatalf("client: %v %+v", p.ClientFound, p.Client)
				}
				if len(p.Sessions) != len(tt.wantKinds) {
					t.Fatalf("sessions: %+v, want kinds %v", p.Sessions, tt.wantKinds)
				}
				got := map[store.TokenKind]bool{}
				for i, ts := range p.Sessions {
					got[ts.Kind] = true
					if ts.RequestID != "r1" || string(ts.Request) != `{"y":2}` || !ts.ExpiresAt.Equal(code.ExpiresAt) {
						t.Fatalf("session %d: %+v", i, ts)
					}
				}
				for _, k := range tt.wantKinds {
					if !got[k] {
						t.Fatalf("missing %s in %+v", k, p.Sessions)
					}
				}
				if len(p.Sessions) > 0 && p.Sessions[0].SignatureHash != tt.sig {
					t.Fatalf("named session not first: %+v", p.Sessions)
				}
			})
		}
	})
}
