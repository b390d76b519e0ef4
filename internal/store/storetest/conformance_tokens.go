package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// The token endpoint's combined statements (store.Tokens' fast path) and
// Store.Begin, which fosite's storage.Transactional runs on.

func fastSession(kind store.TokenKind, client, req string) store.TokenSession {
	return store.TokenSession{Kind: kind, SignatureHash: store.RandomString(12), RequestID: req, ClientID: client,
		AccountID: "a", Active: true, Request: []byte(`{"x":1}`), ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}
}

func refOf(t store.TokenSession) store.TokenRef {
	return store.TokenRef{Kind: t.Kind, SignatureHash: t.SignatureHash}
}

func testTokenBatch(t *testing.T, s store.Store) {
	code, pkce, oidc := fastSession(store.KindAuthorizeCode, "c", "r1"), fastSession(store.KindPKCE, "c", "r1"), fastSession(store.KindOpenID, "c", "r1")
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{}))
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{code, pkce, oidc}}))
	// Another request's session, named as a companion, is left out.
	stray := fastSession(store.KindPKCE, "c", "r9")
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{stray}}))
	rows, err := s.GetRequestTokenSessions(ctx, code.Kind, code.SignatureHash, refOf(pkce), refOf(oidc), refOf(stray),
		store.TokenRef{Kind: store.KindOpenID, SignatureHash: "missing"})
	must(t, err)
	if len(rows) != 3 || rows[0].SignatureHash != code.SignatureHash || string(rows[0].Request) != `{"x":1}` ||
		rows[1].RequestID != "r1" || rows[2].RequestID != "r1" {
		t.Fatalf("GetRequestTokenSessions = %+v", rows)
	}
	sameInstant(t, "ExpiresAt", rows[0].ExpiresAt, code.ExpiresAt)
	rows, err = s.GetRequestTokenSessions(ctx, code.Kind, code.SignatureHash)
	must(t, err)
	if len(rows) != 1 || rows[0].Kind != code.Kind {
		t.Fatalf("GetRequestTokenSessions without companions = %+v", rows)
	}
	_, err = s.GetRequestTokenSessions(ctx, code.Kind, "missing", refOf(pkce))
	wantErr(t, err, store.ErrNotFound)

	// Redeeming: deactivate the code, create the tokens, delete the OpenID
	// session, all at once.
	at, rt := fastSession(store.KindAccessToken, "c", "r1"), fastSession(store.KindRefreshToken, "c", "r1")
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{refOf(code)},
		Create: []store.TokenSession{at, rt}, Delete: []store.TokenRef{refOf(oidc)}}))
	if got, _ := s.GetTokenSession(ctx, code.Kind, code.SignatureHash); got.Active {
		t.Fatal("code still active after its batch")
	}
	_, err = s.GetTokenSession(ctx, oidc.Kind, oidc.SignatureHash)
	wantErr(t, err, store.ErrNotFound)
	if _, err := s.GetTokenSession(ctx, at.Kind, at.SignatureHash); err != nil {
		t.Fatalf("batch's new session: %v", err)
	}

	// A second redemption conflicts and writes nothing.
	at2 := fastSession(store.KindAccessToken, "c", "r1")
	wantErr(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{refOf(code)},
		Create: []store.TokenSession{at2}, Delete: []store.TokenRef{refOf(pkce)}}), store.ErrConflict)
	_, err = s.GetTokenSession(ctx, at2.Kind, at2.SignatureHash)
	wantErr(t, err, store.ErrNotFound)
	if _, err := s.GetTokenSession(ctx, pkce.Kind, pkce.SignatureHash); err != nil {
		t.Fatalf("losing batch's delete applied: %v", err)
	}
	wantErr(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{{Kind: store.KindRefreshToken, SignatureHash: "nope"}}}), store.ErrNotFound)

	// A duplicate signature fails the whole batch.
	dup, rt2 := fastSession(store.KindRefreshToken, "c", "r1"), fastSession(store.KindRefreshToken, "c", "r1")
	dup.SignatureHash = rt.SignatureHash
	if err := s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{refOf(rt)}, Create: []store.TokenSession{rt2, dup}}); err == nil {
		t.Fatal("batch with a duplicate signature accepted")
	}
	if got, _ := s.GetTokenSession(ctx, rt.Kind, rt.SignatureHash); !got.Active {
		t.Fatal("failed batch deactivated its token")
	}
	if _, err := s.GetTokenSession(ctx, rt2.Kind, rt2.SignatureHash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed batch wrote a session: %v", err)
	}

	// A session with its link: none, active, revoked, missing session.
	_, ls, err := s.GetTokenSessionLink(ctx, rt.Kind, rt.SignatureHash)
	must(t, err)
	if ls.Found {
		t.Fatalf("session without a link: %+v", ls)
	}
	acct := newAccount(t, s, "fast@example.com")
	newClient(t, s, "c")
	link, err := s.UpsertLink(ctx, acct.ID, "c", []string{"openid"}, t0)
	must(t, err)
	linked := fastSession(store.KindRefreshToken, "c", "r2")
	linked.LinkID = link.ID
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{linked}}))
	got, ls, err := s.GetTokenSessionLink(ctx, linked.Kind, linked.SignatureHash)
	must(t, err)
	if !ls.Found || ls.Status != store.LinkActive || got.LinkID != link.ID || got.RequestID != "r2" || string(got.Request) != `{"x":1}` {
		t.Fatalf("GetTokenSessionLink = %+v, %+v (link %+v)", got, ls, link)
	}
	sameInstant(t, "LinkState.LastUsedAt", ls.LastUsedAt, link.LastUsedAt)
	sameInstant(t, "ExpiresAt", got.ExpiresAt, linked.ExpiresAt)
	must(t, s.RevokeLink(ctx, link.ID, t0.Add(time.Minute)))
	got, ls, err = s.GetTokenSessionLink(ctx, linked.Kind, linked.SignatureHash)
	must(t, err)
	if !ls.Found || ls.Status != store.LinkRevoked || got.Active {
		t.Fatalf("after RevokeLink: %+v, %+v", got, ls)
	}
	_, _, err = s.GetTokenSessionLink(ctx, linked.Kind, "missing")
	wantErr(t, err, store.ErrNotFound)
}

func testTokenBatchConcurrent(t *testing.T, s store.Store) {
	rt := fastSession(store.KindRefreshToken, "c", "R")
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{rt}}))
	created := make([]store.TokenSession, 12)
	errs := parallel(len(created), func(i int) error {
		created[i] = fastSession(store.KindRefreshToken, "c", "R")
		return s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{refOf(rt)}, Create: []store.TokenSession{created[i]}})
	})
	ok, conflict := count(errs, nil), count(errs, store.ErrConflict)
	if ok != 1 || conflict != len(errs)-1 {
		t.Fatalf("concurrent rotations: %d nil, %d ErrConflict, others %v", ok, conflict, others(errs, store.ErrConflict))
	}
	for i, c := range created {
		_, err := s.GetTokenSession(ctx, c.Kind, c.SignatureHash)
		if (errs[i] == nil) != (err == nil) {
			t.Fatalf("rotation %d answered %v, its new session: %v", i, errs[i], err)
		}
	}
}

func testPrefetchTokenRequest(t *testing.T, s store.Store) {
	cl := newClient(t, s, "app")
	code, pkce, oidc, other := fastSession(store.KindAuthorizeCode, "app", "r1"), fastSession(store.KindPKCE, "app", "r1"),
		fastSession(store.KindOpenID, "app", "r1"), fastSession(store.KindPKCE, "app", "r2")
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{code, pkce, oidc, other}}))
	a := newAccount(t, s, "prefetch@example.com")
	link, err := s.UpsertLink(ctx, a.ID, "app", []string{"openid"}, t0)
	must(t, err)
	rt := fastSession(store.KindRefreshToken, "app", "r1")
	rt.LinkID = link.ID
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{rt}}))
	tests := []struct {
		name       string
		client     string
		kind       store.TokenKind
		sig        string
		also       []store.TokenRef
		wantClient bool
		wantKinds  []store.TokenKind
		wantLink   bool
	}{
		{"code with companions", "app", code.Kind, code.SignatureHash, []store.TokenRef{refOf(pkce), refOf(oidc)}, true,
			[]store.TokenKind{store.KindAuthorizeCode, store.KindPKCE, store.KindOpenID}, false},
		{"another request's session named as a companion", "app", code.Kind, code.SignatureHash, []store.TokenRef{refOf(pkce), refOf(other)}, true,
			[]store.TokenKind{store.KindAuthorizeCode, store.KindPKCE}, false},
		{"code alone", "app", code.Kind, code.SignatureHash, nil, true, []store.TokenKind{store.KindAuthorizeCode}, false},
		{"refresh with its link", "app", rt.Kind, rt.SignatureHash, nil, true, []store.TokenKind{store.KindRefreshToken}, true},
		{"unknown client", "nobody", code.Kind, code.SignatureHash, nil, false, []store.TokenKind{store.KindAuthorizeCode}, false},
		{"unknown session", "app", code.Kind, "missing", []store.TokenRef{refOf(pkce)}, true, nil, false},
		{"neither", "nobody", store.KindRefreshToken, "missing", nil, false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := s.PrefetchTokenRequest(ctx, tt.client, tt.kind, tt.sig, tt.also...)
			must(t, err)
			if p.ClientFound != tt.wantClient || tt.wantClient && (p.Client.Name != cl.Name || len(p.Client.AllowedScopes) != 2) {
				t.Fatalf("client: %v %+v", p.ClientFound, p.Client)
			}
			if tt.wantClient {
				sameInstant(t, "Client.CreatedAt", p.Client.CreatedAt, t0)
			}
			if len(p.Sessions) != len(tt.wantKinds) {
				t.Fatalf("sessions: %+v, want kinds %v", p.Sessions, tt.wantKinds)
			}
			got := map[store.TokenKind]bool{}
			for i, ts := range p.Sessions {
				got[ts.Kind] = true
				if ts.RequestID != "r1" || string(ts.Request) != `{"x":1}` {
					t.Fatalf("session %d: %+v", i, ts)
				}
				sameInstant(t, "ExpiresAt", ts.ExpiresAt, code.ExpiresAt)
			}
			for _, k := range tt.wantKinds {
				if !got[k] {
					t.Fatalf("missing %s in %+v", k, p.Sessions)
				}
			}
			if len(p.Sessions) > 0 && p.Sessions[0].SignatureHash != tt.sig {
				t.Fatalf("named session not first: %+v", p.Sessions)
			}
			if p.Link.Found != tt.wantLink || tt.wantLink && p.Link.Status != store.LinkActive {
				t.Fatalf("link: %+v", p.Link)
			}
		})
	}
}

func testBegin(t *testing.T, s store.Store) {
	for _, commit := range []bool{true, false} {
		tx, err := s.Begin(ctx)
		must(t, err)
		ts := fastSession(store.KindAccessToken, "c", "begin")
		must(t, tx.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{ts}}))
		if _, err := tx.GetTokenSession(ctx, ts.Kind, ts.SignatureHash); err != nil {
			t.Fatalf("write not visible inside its transaction: %v", err)
		}
		if _, err := tx.Begin(ctx); err == nil {
			t.Fatal("Begin inside a transaction succeeded")
		}
		if commit {
			must(t, tx.Commit())
		} else {
			must(t, tx.Rollback())
		}
		must(t, tx.Rollback()) // after the end: nothing to do
		_, err = s.GetTokenSession(ctx, ts.Kind, ts.SignatureHash)
		if commit && err != nil || !commit && !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("commit=%v: after the end: %v", commit, err)
		}
	}

	// A failed statement inside (a savepoint in InTx) leaves the rest.
	tx, err := s.Begin(ctx)
	must(t, err)
	dup := fastSession(store.KindAccessToken, "c", "begin")
	must(t, tx.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{dup}}))
	wantErr(t, tx.InTx(ctx, func(in store.Store) error { return in.CreateTokenSession(ctx, dup) }), store.ErrAlreadyExists)
	must(t, tx.Commit())
	if _, err := s.GetTokenSession(ctx, dup.Kind, dup.SignatureHash); err != nil {
		t.Fatalf("write before a failed savepoint: %v", err)
	}

	// Bound to its context: cancelling it rolls the transaction back.
	cctx, cancel := context.WithCancel(ctx)
	tx, err = s.Begin(cctx)
	must(t, err)
	gone := fastSession(store.KindAccessToken, "c", "begin")
	must(t, tx.ApplyTokenBatch(cctx, store.TokenBatch{Create: []store.TokenSession{gone}}))
	cancel()
	if err := tx.Commit(); err == nil {
		t.Fatal("Commit after the context ended succeeded")
	}
	must(t, tx.Rollback())
	_, err = s.GetTokenSession(ctx, gone.Kind, gone.SignatureHash)
	wantErr(t, err, store.ErrNotFound)
}

// testTokenRotationRecord: a rotation's record (when, and the sealed
// successor) is written with the deactivation and read back by every read
// of the session; a batch requiring a session is written only while it is
// active.
func testTokenRotationRecord(t *testing.T, s store.Store) {
	cl := newClient(t, s, "rot")
	rt, next := fastSession(store.KindRefreshToken, cl.ID, "rr"), fastSession(store.KindRefreshToken, cl.ID, "rr")
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{rt}}))
	got, err := s.GetTokenSession(ctx, rt.Kind, rt.SignatureHash)
	must(t, err)
	if !got.RotatedAt.IsZero() || got.Successor != nil {
		t.Fatalf("fresh session carries a rotation: %+v", got)
	}
	sealed := []byte{0, 1, 2, 0xff}
	at := t0.Add(time.Minute)
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{refOf(rt)},
		Rotation: &store.Rotation{At: at, Successor: sealed}, Create: []store.TokenSession{next}}))
	check := func(how string, got store.TokenSession) {
		t.Helper()
		if got.Active || string(got.Successor) != string(sealed) {
			t.Fatalf("%s: rotated session %+v", how, got)
		}
		sameInstant(t, how+" RotatedAt", got.RotatedAt, at)
	}
	got, err = s.GetTokenSession(ctx, rt.Kind, rt.SignatureHash)
	must(t, err)
	check("GetTokenSession", got)
	got, _, err = s.GetTokenSessionLink(ctx, rt.Kind, rt.SignatureHash)
	must(t, err)
	check("GetTokenSessionLink", got)
	p, err := s.PrefetchTokenRequest(ctx, cl.ID, rt.Kind, rt.SignatureHash)
	must(t, err)
	if len(p.Sessions) != 1 {
		t.Fatalf("prefetch: %+v", p)
	}
	check("PrefetchTokenRequest", p.Sessions[0])

	// Requiring the successor: written while it is active.
	at1 := fastSession(store.KindAccessToken, cl.ID, "rr")
	must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Require: []store.TokenRef{refOf(next)}, Create: []store.TokenSession{at1}}))
	if _, err := s.GetTokenSession(ctx, at1.Kind, at1.SignatureHash); err != nil {
		t.Fatalf("requiring batch's session: %v", err)
	}
	if got, _ := s.GetTokenSession(ctx, next.Kind, next.SignatureHash); !got.Active {
		t.Fatal("requiring a session deactivated it")
	}
	// Requiring a spent or missing session writes nothing.
	at2 := fastSession(store.KindAccessToken, cl.ID, "rr")
	wantErr(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Require: []store.TokenRef{refOf(rt)}, Create: []store.TokenSession{at2}}), store.ErrConflict)
	wantErr(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Require: []store.TokenRef{{Kind: store.KindRefreshToken, SignatureHash: "nope"}},
		Create: []store.TokenSession{at2}}), store.ErrNotFound)
	_, err = s.GetTokenSession(ctx, at2.Kind, at2.SignatureHash)
	wantErr(t, err, store.ErrNotFound)
}

// testTokenRequireConcurrent: batches requiring a session, racing one
// that deactivates it, are each written before the deactivation or not at
// all; the deactivation is written once.
func testTokenRequireConcurrent(t *testing.T, s store.Store) {
	for round := range 3 {
		rt := fastSession(store.KindRefreshToken, "c", "Q")
		must(t, s.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{rt}}))
		created := make([]store.TokenSession, 10)
		errs := parallel(len(created), func(i int) error {
			created[i] = fastSession(store.KindAccessToken, "c", "Q")
			b := store.TokenBatch{Require: []store.TokenRef{refOf(rt)}, Create: []store.TokenSession{created[i]}}
			if i == len(created)/2 {
				b = store.TokenBatch{Deactivate: []store.TokenRef{refOf(rt)}, Rotation: &store.Rotation{At: t0, Successor: []byte("s")},
					Create: []store.TokenSession{created[i]}}
			}
			return s.ApplyTokenBatch(ctx, b)
		})
		if errs[len(created)/2] != nil {
			t.Fatalf("round %d: the deactivation failed: %v", round, errs[len(created)/2])
		}
		if n := count(errs, nil) + count(errs, store.ErrConflict); n != len(errs) {
			t.Fatalf("round %d: answers other than nil and ErrConflict: %v", round, others(errs, store.ErrConflict))
		}
		for i, c := range created {
			_, err := s.GetTokenSession(ctx, c.Kind, c.SignatureHash)
			if (errs[i] == nil) != (err == nil) {
				t.Fatalf("round %d: batch %d answered %v, its session: %v", round, i, errs[i], err)
			}
		}
		if got, _ := s.GetTokenSession(ctx, rt.Kind, rt.SignatureHash); got.Active || string(got.Successor) != "s" {
			t.Fatalf("round %d: after the race %+v", round, got)
		}
	}
}
