package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// floor is the refresh rotation's floor on PostgreSQL: what one rotation
// costs with Linkslot's storage and nothing else, in a bare loop on a
// database/sql pool of pgx connections of the same size as the server's,
// with no HTTP, no fosite, no session JSON and no gorm. Its statements go
// to pgx itself, as the product's do (sqlstore.Each), in a transaction too
// (sqlstore.EachOn), and it reads the prefetch's answer without decoding
// it. Per rotation it sends the product's own two statements —
// sqlstore.PrefetchStatement (the client, the presented refresh token and
// its link in one read) and sqlstore.TokenBatchStatement (deactivate the
// presented token, insert the new access and refresh token sessions: one
// statement, one commit) — and does the cryptography a rotation needs: an
// HMAC and a hash to find the presented refresh token, the same for each
// new token, and one ES256 signature (the access token JWT), as the floor
// the performance targets are set against is defined. The product also
// signs the ID token a refresh answers when openid was granted; the floor
// leaves it out on purpose, so the ratio counts it as the product's cost.
// The stored request is a copy of a real refresh session's, so the rows are
// the size of the product's. With accessRow false the access-token session
// is not inserted: the floor of a design that keeps no row per JWT access
// token. With inTx the two statements run inside BEGIN … COMMIT, as the
// performance issue defined its floor ("the product's own two statements in
// one transaction"); the product sends them without one (the batch is a
// single statement), so the floor without is the stricter.
//
// A floor also serves its rotation over HTTP (ServeHTTP): the refresh
// grant's form parsed, the presented token found by its hash, the same
// statements and signature, and the token answer in JSON, from a bare
// net/http handler on its own httptest server, driven by the same load
// generator as the product (person.rotate). What that costs the floor is
// what any HTTP server would add to it on the same machine.
type floor struct {
	db        *sql.DB
	key       *ecdsa.PrivateKey
	secret    []byte
	tmpl      store.TokenSession // a real refresh session: client, account, link, request
	chains    []string           // per worker: its current refresh token
	accessRow bool
	inTx      bool
	prefetchQ string // the prefetch (the same for every rotation)
}

// newFloor opens its own pool on dsn and gives each of workers a refresh
// token of its own, copied from a refresh session the people's sign-ins
// left in the database.
func newFloor(ctx context.Context, dsn string, poolSize, workers int, accessRow, inTx bool) (*floor, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	f := &floor{db: db, accessRow: accessRow, inTx: inTx, secret: make([]byte, 32)}
	rand.Read(f.secret)
	if f.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		db.Close()
		return nil, err
	}
	t := &f.tmpl
	err = db.QueryRowContext(ctx, `SELECT request_id, client_id, account_id, link_id, request FROM token_sessions
WHERE kind = 'refresh_token' AND active LIMIT 1`).Scan(&t.RequestID, &t.ClientID, &t.AccountID, &t.LinkID, &t.Request)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("floor: no refresh session to copy: %w", err)
	}
	f.prefetchQ, _ = sqlstore.PrefetchStatement(true, t.ClientID, store.KindRefreshToken, "")
	for w := 0; w < workers; w++ {
		refresh := randHex(32)
		if err := f.batch(ctx, f.send, store.TokenBatch{Create: []store.TokenSession{f.session(store.KindRefreshToken, f.hash(refresh), time.Now())}}, 0); err != nil {
			db.Close()
			return nil, err
		}
		f.chains = append(f.chains, refresh)
	}
	return f, nil
}

// hash is the signature hash a refresh token is stored by: its HMAC
// (what fosite checks a presented token against), hashed.
func (f *floor) hash(refresh string) string { return tokenHash(f.secret, refresh) }

// tokenHash is the signature hash a token or code is stored by: its HMAC
// under secret, hashed.
func tokenHash(secret []byte, token string) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(token))
	return store.HashSecret(base64.RawURLEncoding.EncodeToString(mac.Sum(nil)))
}

func (f *floor) Close() { f.db.Close() }

func (f *floor) session(kind store.TokenKind, sig string, now time.Time) store.TokenSession {
	t := f.tmpl
	t.Kind, t.SignatureHash, t.Active, t.CreatedAt = kind, sig, true, now
	t.ExpiresAt = now.Add(30 * 24 * time.Hour)
	if kind == store.KindAccessToken {
		t.ExpiresAt = now.Add(15 * time.Minute)
	}
	return t
}

// batch sends sqlstore.TokenBatchStatement for b and checks that it
// deactivated want sessions.
func (f *floor) batch(ctx context.Context, send sender, b store.TokenBatch, want int64) error {
	q, args := sqlstore.TokenBatchStatement(b)
	var n int64
	if err := send(ctx, q, args, func(r sqlstore.Scanner) error { return r.Scan(&n) }); err != nil {
		return err
	}
	if n != want {
		return fmt.Errorf("floor: batch deactivated %d sessions, want %d", n, want)
	}
	return nil
}

// rotate is worker w's rotation in a bare loop.
func (f *floor) rotate(ctx context.Context, w int) error {
	_, refresh, err := f.exchange(ctx, f.chains[w])
	if err == nil {
		f.chains[w] = refresh
	}
	return err
}

// exchange rotates the refresh token presented and answers the new access
// and refresh tokens.
func (f *floor) exchange(ctx context.Context, presented string) (access, refresh string, err error) {
	if !f.inTx {
		return f.rotateOn(ctx, f.send, f.hash(presented))
	}
	// In one transaction, on pgx itself as outside one (sqlstore.Each).
	conn, err := f.db.Conn(ctx)
	if err != nil {
		return "", "", err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		tx, err := dc.(*stdlib.Conn).Conn().Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		access, refresh, err = f.rotateOn(ctx, func(ctx context.Context, query string, args []any, each func(sqlstore.Scanner) error) error {
			return sqlstore.EachOn(ctx, tx, query, args, each)
		}, f.hash(presented))
		if err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
	return access, refresh, err
}

// sender sends one statement and calls each for every row of its answer.
type sender func(ctx context.Context, query string, args []any, each func(sqlstore.Scanner) error) error

// send is the sender outside a transaction: the product's own way.
func (f *floor) send(ctx context.Context, query string, args []any, each func(sqlstore.Scanner) error) error {
	return sqlstore.Each(ctx, f.db, query, args, each)
}

// rotateOn is one rotation's statements, sent through send, for the
// refresh token stored by the signature hash cur.
func (f *floor) rotateOn(ctx context.Context, send sender, cur string) (access, refresh string, err error) {
	// 1. The prefetch: client, presented token, link, read to the end.
	// Each row is read without decoding it: pgx's raw values.
	found := false
	err = send(ctx, f.prefetchQ, []any{f.tmpl.ClientID, string(store.KindRefreshToken), cur}, func(r sqlstore.Scanner) error {
		raw, ok := r.(interface{ RawValues() [][]byte })
		if !ok {
			return fmt.Errorf("floor: rows of type %T, not pgx's", r)
		}
		raw.RawValues()
		found = true
		return nil
	})
	if err != nil {
		return "", "", err
	}
	if !found {
		return "", "", fmt.Errorf("floor: prefetch found nothing")
	}
	// 2. The new tokens: the access token JWT (one ES256 signature) and
	// the refresh token (random, HMAC), each stored by its hash; first,
	// with -floor-cpu, that much more CPU, holding no connection.
	spin(floorCPU)
	now := time.Now()
	if access, err = f.sign(now); err != nil {
		return "", "", err
	}
	refresh = randHex(32)
	create := []store.TokenSession{f.session(store.KindRefreshToken, f.hash(refresh), now)}
	if f.accessRow {
		create = append(create, f.session(store.KindAccessToken, store.HashSecret(access[strings.LastIndexByte(access, '.')+1:]), now))
	}
	// 3. The batch: deactivate the presented token, recording the
	// rotation and a successor of the product's sealed size (a 12-byte
	// nonce, a 94-byte refresh token, a 16-byte tag) as the product does
	// with its refresh grace on, insert the new ones.
	rot := &store.Rotation{At: now, Successor: []byte(randHex(61))}
	if err := f.batch(ctx, send, store.TokenBatch{Deactivate: []store.TokenRef{{Kind: store.KindRefreshToken, SignatureHash: cur}},
		Rotation: rot, Create: create}, 1); err != nil {
		return "", "", err
	}
	return access, refresh, nil
}

// ServeHTTP answers a refresh grant as a bare token endpoint would: the
// form's grant and client checked, the presented token rotated, and the
// token answer in JSON.
func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("client_id") != f.tmpl.ClientID {
		http.Error(w, "invalid_request", http.StatusBadRequest)
		return
	}
	access, refresh, err := f.exchange(r.Context(), r.PostForm.Get("refresh_token"))
	if err != nil {
		http.Error(w, "invalid_grant", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(struct {
		AccessToken  string `json:"access_token"`
		ExpiresIn    int    `json:"expires_in"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
		TokenType    string `json:"token_type"`
	}{access, 899, refresh, "openid bookings:read bookings:write", "bearer"})
}

// sign makes an access-token-sized ES256 JWT.
func (f *floor) sign(now time.Time) (string, error) {
	return signJWT(f.key, now, "at+jwt", f.tmpl)
}

// signJWT makes a token-sized ES256 JWT of type typ for the client, link
// and account of t.
func signJWT(key *ecdsa.PrivateKey, now time.Time, typ string, t store.TokenSession) (string, error) {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"ES256","kid":"floor-key-0000000000000000","typ":"` + typ + `"}`))
	claims := fmt.Sprintf(`{"aud":["http://127.0.0.1:8081/mcp"],"client_id":%q,"exp":%d,"iat":%d,"iss":"http://127.0.0.1:8080","jti":%q,"link_id":%q,"scope":"openid bookings:read bookings:write","sub":%q}`,
		t.ClientID, now.Add(15*time.Minute).Unix(), now.Unix(), randHex(16), t.LinkID, t.AccountID)
	signing := head + "." + enc.EncodeToString([]byte(claims))
	sum := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + enc.EncodeToString(sig), nil
}

// floorCPU is -floor-cpu: CPU time each floor rotation spends between its
// two statements, holding no connection, to measure what the process's
// CPU per rotation does to the rate on 4 connections
// (docs/performance.md, "Where a rotation's time goes").
var floorCPU time.Duration

// spin keeps a core busy for d.
func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}
