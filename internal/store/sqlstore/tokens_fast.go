package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// ApplyTokenBatch implements store.Tokens. On PostgreSQL the batch is
// one statement (data-modifying CTEs: the conditional UPDATE, then the
// DELETE and INSERT only when it flipped every row it had to), so outside a
// transaction it costs one round trip and one commit. Concurrent batches on
// the same session serialize on its row lock; the loser re-reads the row
// after the winner commits, sees it inactive, and writes nothing. A
// required session is read FOR SHARE, so a batch deactivating it waits for
// the requiring one, or the requiring one, waiting, sees it inactive.
func (s *Store) ApplyTokenBatch(ctx context.Context, b store.TokenBatch) error {
	if b.Empty() {
		return nil
	}
	var n int64
	var err error
	if s.dialect == "postgres" {
		n, err = s.applyTokenBatchPG(ctx, b)
	} else {
		n, err = s.applyTokenBatchTx(ctx, b)
	}
	if err != nil {
		return err
	}
	if n == int64(len(b.Deactivate)+len(b.Require)) {
		return nil
	}
	return s.deactivateFailure(ctx, append(slices.Clip(b.Deactivate), b.Require...))
}

// deactivateFailure tells ErrNotFound (a session is missing) from
// ErrConflict (all exist, one was already inactive).
func (s *Store) deactivateFailure(ctx context.Context, refs []store.TokenRef) error {
	for _, r := range refs {
		if _, err := s.GetTokenSession(ctx, r.Kind, r.SignatureHash); err != nil {
			return err
		}
	}
	return store.ErrConflict
}

// refsWhere is the condition matching every session refs names, its
// arguments bound through b; prefix names the table's columns ("t.").
func refsWhere(prefix string, refs []store.TokenRef, b *binder) string {
	var sb strings.Builder
	sb.WriteByte('(')
	for i, r := range refs {
		if i > 0 {
			sb.WriteString(" OR ")
		}
		sb.WriteString("(" + prefix + "kind = " + b.bind(string(r.Kind)) + " AND " + prefix + "signature_hash = " + b.bind(r.SignatureHash) + ")")
	}
	sb.WriteByte(')')
	return sb.String()
}

func (s *Store) applyTokenBatchPG(ctx context.Context, b store.TokenBatch) (int64, error) {
	query, args := TokenBatchStatement(b)
	var n int64
	if err := s.directRow(ctx, query, args, &n); err != nil {
		return 0, translate(err)
	}
	return n, nil
}

// TokenBatchStatement is the one PostgreSQL statement ApplyTokenBatch sends
// for b, with PostgreSQL's numbered placeholders, and its arguments; it
// answers one row, the number of sessions it deactivated. Exported for the
// benchmarks' floor program (bench), which sends the product's own
// statements bare.
//
// The text depends only on b's shape (how many sessions it deactivates,
// deletes and creates), so each shape's is written once and kept
// (batchTexts); only the arguments are gathered per batch, in the order
// buildTokenBatch binds them. Shapes beyond batchTextLimit of any part are
// written each time.
func TokenBatchStatement(b store.TokenBatch) (string, []any) {
	shape := batchShape{len(b.Deactivate), len(b.Delete), len(b.Create), len(b.Require), b.Rotation != nil}
	if shape.deactivate > batchTextLimit || shape.delete > batchTextLimit || shape.create > batchTextLimit || shape.require > batchTextLimit {
		return buildTokenBatch(b)
	}
	args := make([]any, 0, 2*shape.deactivate+2+2*shape.require+2*shape.delete+10*shape.create)
	for _, r := range b.Deactivate {
		args = append(args, string(r.Kind), r.SignatureHash)
	}
	if b.Rotation != nil {
		args = append(args, store.UTC(b.Rotation.At), b.Rotation.Successor)
	}
	for _, r := range b.Require {
		args = append(args, string(r.Kind), r.SignatureHash)
	}
	for _, r := range b.Delete {
		args = append(args, string(r.Kind), r.SignatureHash)
	}
	for _, t := range b.Create {
		r := toTokenRow(t)
		args = append(args, r.Kind, r.SignatureHash, r.RequestID, r.ClientID, r.AccountID, r.LinkID, r.Active, r.Request, r.ExpiresAt, r.CreatedAt)
	}
	if q, ok := batchTexts.Load(shape); ok {
		return q.(string), args
	}
	tb := store.TokenBatch{Deactivate: make([]store.TokenRef, shape.deactivate), Require: make([]store.TokenRef, shape.require),
		Delete: make([]store.TokenRef, shape.delete), Create: make([]store.TokenSession, shape.create)}
	if shape.rotation {
		tb.Rotation = &store.Rotation{}
	}
	q, _ := buildTokenBatch(tb)
	batchTexts.Store(shape, q)
	return q, args
}

// batchShape is what TokenBatchStatement's text depends on.
type batchShape struct {
	deactivate, delete, create, require int
	rotation                            bool
}

// batchTexts holds TokenBatchStatement's text by batchShape. The token
// paths use a handful of shapes (a rotation deactivates one session and
// creates two; an authorization creates three).
var batchTexts sync.Map

// batchTextLimit is the most of any part of a batch whose text is kept.
const batchTextLimit = 8

// buildTokenBatch writes TokenBatchStatement's text for b and gathers its
// arguments.
func buildTokenBatch(b store.TokenBatch) (string, []any) {
	bd := binder{numbered: true}
	var ctes, conds, counts []string
	if len(b.Deactivate) > 0 {
		where := refsWhere("", b.Deactivate, &bd)
		set := "active = FALSE"
		if b.Rotation != nil {
			set += ", rotated_at = " + bd.bind(store.UTC(b.Rotation.At)) + "::timestamptz, successor = " + bd.bind(b.Rotation.Successor) + "::bytea"
		}
		ctes = append(ctes, "d AS (UPDATE token_sessions SET "+set+" WHERE active AND "+where+" RETURNING 1)")
		conds = append(conds, fmt.Sprintf("(SELECT count(*) FROM d) = %d", len(b.Deactivate)))
		counts = append(counts, "(SELECT count(*) FROM d)")
	}
	if len(b.Require) > 0 {
		ctes = append(ctes, "q AS (SELECT 1 FROM token_sessions WHERE active AND "+refsWhere("", b.Require, &bd)+" FOR SHARE)")
		conds = append(conds, fmt.Sprintf("(SELECT count(*) FROM q) = %d", len(b.Require)))
		counts = append(counts, "(SELECT count(*) FROM q)")
	}
	cond := "TRUE"
	if len(conds) > 0 {
		cond = strings.Join(conds, " AND ")
	}
	if len(b.Delete) > 0 {
		ctes = append(ctes, "x AS (DELETE FROM token_sessions WHERE "+refsWhere("", b.Delete, &bd)+" AND "+cond+" RETURNING 1)")
	}
	if len(b.Create) > 0 {
		var ib strings.Builder
		ib.WriteString("i AS (INSERT INTO token_sessions (kind, signature_hash, request_id, client_id, account_id, link_id, active, request, expires_at, created_at) SELECT * FROM (VALUES ")
		for i, t := range b.Create {
			if i > 0 {
				ib.WriteString(", ")
			}
			r := toTokenRow(t)
			ib.WriteString("(" + bd.bind(r.Kind) + "::text, " + bd.bind(r.SignatureHash) + "::text, " + bd.bind(r.RequestID) + "::text, " +
				bd.bind(r.ClientID) + "::text, " + bd.bind(r.AccountID) + "::text, " + bd.bind(r.LinkID) + "::text, " +
				bd.bind(r.Active) + "::boolean, " + bd.bind(r.Request) + "::bytea, " + bd.bind(r.ExpiresAt) + "::timestamptz, " +
				bd.bind(r.CreatedAt) + "::timestamptz)")
		}
		ib.WriteString(") AS v WHERE " + cond + " RETURNING 1)")
		ctes = append(ctes, ib.String())
	}
	tail := " SELECT 0"
	if len(counts) > 0 {
		tail = " SELECT " + strings.Join(counts, " + ")
	}
	return "WITH " + strings.Join(ctes, ", ") + tail, bd.args
}

// applyTokenBatchTx is the portable form: one transaction (a savepoint
// inside one), the conditional UPDATE first.
func (s *Store) applyTokenBatchTx(ctx context.Context, b store.TokenBatch) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *gorm.DB) error {
		if len(b.Deactivate) > 0 {
			var bd binder
			where := refsWhere("", b.Deactivate, &bd)
			set := map[string]any{"active": false}
			if b.Rotation != nil {
				set["rotated_at"], set["successor"] = store.UTC(b.Rotation.At), b.Rotation.Successor
			}
			res := tx.Model(&tokenRow{}).Where("active = ?", true).Where(where, bd.args...).Updates(set)
			if res.Error != nil {
				return res.Error
			}
			if n = res.RowsAffected; n != int64(len(b.Deactivate)) {
				return errBatchAborted
			}
		}
		if len(b.Require) > 0 {
			// The transaction holds the write lock from its BEGIN
			// (sqlitegate.go), so what it reads stays so until it ends.
			var bd binder
			var active int64
			where := refsWhere("", b.Require, &bd)
			if err := tx.Model(&tokenRow{}).Where("active = ?", true).Where(where, bd.args...).Count(&active).Error; err != nil {
				return err
			}
			if n += active; active != int64(len(b.Require)) {
				return errBatchAborted
			}
		}
		if len(b.Delete) > 0 {
			var bd binder
			where := refsWhere("", b.Delete, &bd)
			if err := tx.Where(where, bd.args...).Delete(&tokenRow{}).Error; err != nil {
				return err
			}
		}
		if len(b.Create) > 0 {
			rows := make([]tokenRow, len(b.Create))
			for i, t := range b.Create {
				rows[i] = toTokenRow(t)
			}
			if err := tx.Omit(rotationColumns...).Create(&rows).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err == errBatchAborted {
		return n, nil
	}
	return n, err
}

var errBatchAborted = fmt.Errorf("sqlstore: token batch aborted")

// tokenLinkRow is a session row with its link's columns (NULL without a
// link).
type tokenLinkRow struct {
	Token          tokenRow `gorm:"embedded"`
	LinkStatus     *string
	LinkLastUsedAt *time.Time
}

// GetTokenSessionLink implements store.Tokens.
func (s *Store) GetTokenSessionLink(ctx context.Context, kind store.TokenKind, sig string) (store.TokenSession, store.LinkState, error) {
	var rows []tokenLinkRow
	err := s.q(ctx).Raw(`SELECT t.*, l.status AS link_status, l.last_used_at AS link_last_used_at
FROM token_sessions t LEFT JOIN links l ON t.link_id <> '' AND l.id = t.link_id
WHERE t.kind = ? AND t.signature_hash = ? LIMIT 1`, string(kind), sig).Scan(&rows).Error
	if err != nil {
		return store.TokenSession{}, store.LinkState{}, translate(err)
	}
	if len(rows) == 0 {
		return store.TokenSession{}, store.LinkState{}, store.ErrNotFound
	}
	r := rows[0]
	var ls store.LinkState
	if r.LinkStatus != nil {
		ls.Found, ls.Status = true, *r.LinkStatus
		if r.LinkLastUsedAt != nil {
			ls.LastUsedAt = store.UTC(*r.LinkLastUsedAt)
		}
	}
	return toToken(r.Token), ls, nil
}

// GetRequestTokenSessions implements store.Tokens: every session by its
// own key, through the primary key, so no statistics can turn the read
// into a walk over a kind's rows.
func (s *Store) GetRequestTokenSessions(ctx context.Context, kind store.TokenKind, sig string, also ...store.TokenRef) ([]store.TokenSession, error) {
	var rows []tokenRow
	var bd binder
	where := refsWhere("", append([]store.TokenRef{{Kind: kind, SignatureHash: sig}}, also...), &bd)
	if err := s.q(ctx).Where(where, bd.args...).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	sessions := make([]store.TokenSession, len(rows))
	for i, r := range rows {
		sessions[i] = toToken(r)
	}
	out := namedFirst(sessions, kind, sig)
	if len(out) == 0 {
		return nil, store.ErrNotFound
	}
	return out, nil
}

// namedFirst orders sessions with the named one first, followed by those
// of its request; with the named one missing it answers none, and
// sessions of another request are left out.
func namedFirst(sessions []store.TokenSession, kind store.TokenKind, sig string) []store.TokenSession {
	i := slices.IndexFunc(sessions, func(t store.TokenSession) bool { return t.Kind == kind && t.SignatureHash == sig })
	if i < 0 {
		return nil
	}
	out := append(make([]store.TokenSession, 0, len(sessions)), sessions[i])
	for j, t := range sessions {
		if j != i && t.RequestID == sessions[i].RequestID {
			out = append(out, t)
		}
	}
	return out
}

// prefetchRow is one row of the prefetch join, its fields in the order of
// PrefetchStatement's columns; every column may be NULL (nullable.go).
type prefetchRow struct {
	CID            nullString
	CName          nullString
	CSecretHash    nullString
	CPublic        nullBool
	CRedirectURIs  nullString
	CAllowedScopes nullString
	CDefaultScopes nullString
	CGrantTypes    nullString
	CLogoURL       nullString
	CContact       nullString
	CDisabled      nullBool
	CPinned        nullString
	COpenLinked    nullBool
	CJWKSURI       nullString
	CIDTokenAlg    nullString
	CCreatedAt     nullTime
	CUpdatedAt     nullTime
	TKind          nullString
	TSignatureHash nullString
	TRequestID     nullString
	TClientID      nullString
	TAccountID     nullString
	TLinkID        nullString
	TActive        nullBool
	TRequest       []byte
	TExpiresAt     nullTime
	TCreatedAt     nullTime
	TRotatedAt     nullTime
	TSuccessor     []byte
	LStatus        nullString
	LLastUsedAt    nullTime
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// PrefetchTokenRequest implements store.Tokens: a one-row
// anchor LEFT JOINed to the client, the sessions and the link, so a missing
// client or session still answers the other.
func (s *Store) PrefetchTokenRequest(ctx context.Context, clientID string, kind store.TokenKind, sig string, also ...store.TokenRef) (store.TokenPrefetch, error) {
	// Sent past gorm's statement building, and scanned column by column
	// rather than by gorm's reflection over prefetchRow (a tenth of a
	// refresh rotation's CPU).
	query, args := PrefetchStatement(s.binder().numbered, clientID, kind, sig, also...)
	var rows []prefetchRow
	err := s.direct(ctx, query, args, func(rs Scanner) error {
		var r prefetchRow
		if err := rs.Scan(&r.CID, &r.CName, &r.CSecretHash, &r.CPublic, &r.CRedirectURIs, &r.CAllowedScopes, &r.CDefaultScopes,
			&r.CGrantTypes, &r.CLogoURL, &r.CContact, &r.CDisabled, &r.CPinned, &r.COpenLinked, &r.CJWKSURI, &r.CIDTokenAlg,
			&r.CCreatedAt, &r.CUpdatedAt, &r.TKind, &r.TSignatureHash, &r.TRequestID, &r.TClientID,
			&r.TAccountID, &r.TLinkID, &r.TActive, &r.TRequest, &r.TExpiresAt, &r.TCreatedAt,
			&r.TRotatedAt, &r.TSuccessor, &r.LStatus, &r.LLastUsedAt); err != nil {
			return err
		}
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return store.TokenPrefetch{}, translate(err)
	}
	return prefetchResult(rows, kind, sig), nil
}

// PrefetchStatement is the statement PrefetchTokenRequest sends, with ?
// placeholders (SQLite's) or, when numbered, PostgreSQL's $1, $2, …, and
// its arguments. Every session is named by its own key
// and found through the primary key: finding a code's companions by their
// request instead let PostgreSQL, once ANALYZE had seen next to no PKCE or
// OpenID sessions, find them by kind and walk the index entry of every
// one deleted since the last vacuum. Exported for the benchmarks' floor
// program (bench).
func PrefetchStatement(numbered bool, clientID string, kind store.TokenKind, sig string, also ...store.TokenRef) (string, []any) {
	bd := binder{numbered: numbered}
	client := bd.bind(clientID)
	cond := refsWhere("t.", append([]store.TokenRef{{Kind: kind, SignatureHash: sig}}, also...), &bd)
	return `SELECT c.id AS c_id, c.name AS c_name, c.secret_hash AS c_secret_hash, c.public AS c_public,
 c.redirect_uris AS c_redirect_uris, c.allowed_scopes AS c_allowed_scopes, c.default_scopes AS c_default_scopes,
 c.grant_types AS c_grant_types, c.logo_url AS c_logo_url, c.contact AS c_contact, c.disabled AS c_disabled,
 c.pinned_document AS c_pinned, c.open_linked AS c_open_linked, c.jwks_uri AS c_jwks_uri,
 c.id_token_signed_response_alg AS c_id_token_alg,
 c.created_at AS c_created_at, c.updated_at AS c_updated_at,
 t.kind AS t_kind, t.signature_hash AS t_signature_hash, t.request_id AS t_request_id, t.client_id AS t_client_id,
 t.account_id AS t_account_id, t.link_id AS t_link_id, t.active AS t_active, t.request AS t_request,
 t.expires_at AS t_expires_at, t.created_at AS t_created_at, t.rotated_at AS t_rotated_at, t.successor AS t_successor,
 l.status AS l_status, l.last_used_at AS l_last_used_at
FROM (SELECT 1 AS one) AS anchor
LEFT JOIN clients c ON c.id = ` + client + `
LEFT JOIN token_sessions t ON ` + cond + `
LEFT JOIN links l ON t.link_id <> '' AND l.id = t.link_id`, bd.args
}

func prefetchResult(rows []prefetchRow, kind store.TokenKind, sig string) store.TokenPrefetch {
	var p store.TokenPrefetch
	var sessions []store.TokenSession
	for i, r := range rows {
		if i == 0 && r.CID.Valid {
			p.ClientFound = true
			p.Client = toClient(clientRow{ID: r.CID.V, Name: r.CName.V, SecretHash: r.CSecretHash.V, Public: r.CPublic.V,
				RedirectURIs: r.CRedirectURIs.V, AllowedScopes: r.CAllowedScopes.V, DefaultScopes: r.CDefaultScopes.V,
				GrantTypes: r.CGrantTypes.V, LogoURL: r.CLogoURL.V, Contact: r.CContact.V, Disabled: r.CDisabled.V,
				PinnedDocument: r.CPinned.V, OpenLinked: r.COpenLinked.V, JWKSURI: r.CJWKSURI.V, IDTokenAlg: r.CIDTokenAlg.V,
				CreatedAt: r.CCreatedAt.V, UpdatedAt: r.CUpdatedAt.V})
		}
		if !r.TKind.Valid {
			continue
		}
		t := toToken(tokenRow{Kind: r.TKind.V, SignatureHash: r.TSignatureHash.V, RequestID: r.TRequestID.V,
			ClientID: r.TClientID.V, AccountID: r.TAccountID.V, LinkID: r.TLinkID.V, Active: r.TActive.V,
			Request: r.TRequest, ExpiresAt: r.TExpiresAt.V, CreatedAt: r.TCreatedAt.V, Successor: r.TSuccessor})
		if r.TRotatedAt.Valid {
			t.RotatedAt = store.UTC(r.TRotatedAt.V)
		}
		if t.Kind == kind && t.SignatureHash == sig && r.LStatus.Valid {
			p.Link = store.LinkState{Found: true, Status: r.LStatus.V, LastUsedAt: store.UTC(r.LLastUsedAt.V)}
		}
		sessions = append(sessions, t)
	}
	p.Sessions = namedFirst(sessions, kind, sig) // none when the named session is gone
	return p
}
