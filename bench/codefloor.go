package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// codeFloor is the signed-in code flow's floor on PostgreSQL: what one
// flow costs with Linkslot's storage and nothing else, in a bare loop on a
// store of its own (the product's sqlstore, on a pool of the same size as
// the server's), with no HTTP, no fosite, no cookies and no session JSON.
// Per flow it makes the product's own five storage calls, in the product's
// order, through the same store methods the servers call:
//
//   - the authorization: the person's web session with their account
//     (GetWebSessionAccount, what the sign-in cookie resolves to), the
//     client with the person's active link (GetClientLink), and the code's
//     batch (ApplyTokenBatch: one row, the PKCE and OpenID sessions folded
//     into it);
//   - the exchange: the prefetch of the client, the code and its companions
//     (PrefetchTokenRequest with the same companion keys as the token
//     endpoint's) and the exchange's batch (ApplyTokenBatch: redeem the
//     code, insert the access and refresh token sessions);
//
// and the cryptography a flow needs: an HMAC and a hash for the code and for
// each new token, the PKCE check (SHA-256 of the verifier), and the two
// ES256 signatures that a flow with openid granted must make, the access
// token's and the ID token's. The stored requests are copies of the
// product's own rows for the same person, so every row is the size of the
// product's. Unlike the refresh floor, it decodes what it reads: it goes
// through the store's methods, which scan into the store's records, as the
// product does; only fosite's decoding of the stored request is left out.
//
// What the product spends beyond it per flow is two HTTP round trips on
// both sides (server and load generator), fosite's authorize and token
// handling, the web session's cookie, and the request's JSON: so the code
// flow ÷ this floor, in alternating windows of one run, says how much of
// what its own storage allows the product reaches, on any machine speed.
type codeFloor struct {
	st     *sqlstore.Store
	key    *ecdsa.PrivateKey
	secret []byte
	code   store.TokenSession // the product's code row for one of the people
	access store.TokenSession // and an access and a refresh token row of theirs
	fresh  store.TokenSession
	web    string // the hash of the person's web session
}

// newCodeFloor opens its own store on dsn with poolSize connections and
// copies one signed-in person's code, access and refresh token rows and
// web session as templates.
func newCodeFloor(ctx context.Context, dsn string, poolSize int) (*codeFloor, error) {
	st, err := sqlstore.Open(ctx, dsn, sqlstore.Options{MaxOpenConns: poolSize, Logger: discard})
	if err != nil {
		return nil, err
	}
	f := &codeFloor{st: st, secret: make([]byte, 32)}
	rand.Read(f.secret)
	if f.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		st.Close()
		return nil, err
	}
	// One person's rows, from the code flows that signed the people in:
	// the code's row holds its folded PKCE and OpenID forms.
	const cols = `SELECT request_id, client_id, account_id, link_id, request FROM token_sessions WHERE link_id <> '' AND kind = $1`
	const newest = ` ORDER BY created_at DESC LIMIT 1`
	sqlDB := st.SQL()
	c := &f.code
	if err := sqlDB.QueryRowContext(ctx, cols+newest, string(store.KindAuthorizeCode)).
		Scan(&c.RequestID, &c.ClientID, &c.AccountID, &c.LinkID, &c.Request); err != nil {
		st.Close()
		return nil, fmt.Errorf("code floor: no code to copy: %w", err)
	}
	c.Kind = store.KindAuthorizeCode
	for _, t := range []struct {
		kind store.TokenKind
		into *store.TokenSession
	}{{store.KindAccessToken, &f.access}, {store.KindRefreshToken, &f.fresh}} {
		if err := sqlDB.QueryRowContext(ctx, cols+` AND account_id = $2`+newest, string(t.kind), c.AccountID).
			Scan(&t.into.RequestID, &t.into.ClientID, &t.into.AccountID, &t.into.LinkID, &t.into.Request); err != nil {
			st.Close()
			return nil, fmt.Errorf("code floor: no %s to copy: %w", t.kind, err)
		}
		t.into.Kind = t.kind
	}
	if err := sqlDB.QueryRowContext(ctx, `SELECT id_hash FROM web_sessions WHERE account_id = $1 LIMIT 1`, c.AccountID).Scan(&f.web); err != nil {
		st.Close()
		return nil, fmt.Errorf("code floor: no web session to copy: %w", err)
	}
	return f, nil
}

func (f *codeFloor) Close() { f.st.Close() }

// row is a new active session like tmpl, of request requestID, stored by
// sigHash, living life from now.
func row(tmpl store.TokenSession, requestID, sigHash string, now time.Time, life time.Duration) store.TokenSession {
	t := tmpl
	t.RequestID, t.SignatureHash, t.Active, t.CreatedAt, t.ExpiresAt = requestID, sigHash, true, now, now.Add(life)
	return t
}

// flow is one signed-in code flow with remembered consent.
func (f *codeFloor) flow(ctx context.Context, _ int) error {
	c := f.code
	// The authorization: the person by their web session, the client with
	// their link, the code.
	ws, acct, err := f.st.GetWebSessionAccount(ctx, f.web)
	if err != nil {
		return fmt.Errorf("code floor: web session: %w", err)
	}
	if acct.Disabled || !time.Now().Before(ws.ExpiresAt) {
		return errors.New("code floor: the web session has ended")
	}
	client, link, err := f.st.GetClientLink(ctx, c.ClientID, c.AccountID)
	if err != nil || link == nil || client.Disabled {
		return fmt.Errorf("code floor: client and link: %v (link %v)", err, link != nil)
	}
	verifier := randHex(32)
	challenge := sha256.Sum256([]byte(verifier))
	code := randHex(32)
	codeSig := tokenHash(f.secret, code)
	now := time.Now()
	requestID := randHex(16)
	if err := f.st.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{row(c, requestID, codeSig, now, time.Minute)}}); err != nil {
		return fmt.Errorf("code floor: code: %w", err)
	}
	// The exchange: the prefetch with the code's companions, PKCE, two
	// signatures, the batch that redeems the code and stores the tokens.
	p, err := f.st.PrefetchTokenRequest(ctx, c.ClientID, store.KindAuthorizeCode, codeSig,
		store.TokenRef{Kind: store.KindPKCE, SignatureHash: codeSig}, store.TokenRef{Kind: store.KindOpenID, SignatureHash: store.HashSecret(code)})
	if err != nil {
		return fmt.Errorf("code floor: prefetch: %w", err)
	}
	if !p.ClientFound || len(p.Sessions) == 0 || !p.Sessions[0].Active {
		return fmt.Errorf("code floor: prefetch found no active code (client %v, %d sessions)", p.ClientFound, len(p.Sessions))
	}
	if got := sha256.Sum256([]byte(verifier)); !hmac.Equal(got[:], challenge[:]) {
		return errors.New("code floor: PKCE")
	}
	now = time.Now()
	access, err := signJWT(f.key, now, "at+jwt", c)
	if err != nil {
		return err
	}
	if _, err := signJWT(f.key, now, "JWT", c); err != nil { // the ID token
		return err
	}
	refresh := randHex(32)
	err = f.st.ApplyTokenBatch(ctx, store.TokenBatch{
		Deactivate: []store.TokenRef{{Kind: store.KindAuthorizeCode, SignatureHash: codeSig}},
		Create: []store.TokenSession{
			row(f.access, requestID, store.HashSecret(access[strings.LastIndexByte(access, '.')+1:]), now, 15*time.Minute),
			row(f.fresh, requestID, tokenHash(f.secret, refresh), now, 30*24*time.Hour),
		}})
	if err != nil {
		return fmt.Errorf("code floor: exchange: %w", err)
	}
	return nil
}
