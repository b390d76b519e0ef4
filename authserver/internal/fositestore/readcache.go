package fositestore

import (
	"context"
	"sync"

	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/store"
)

// readCache is what one HTTP request has read from the store, so that
// fosite's repeated reads cost no statement: fosite looks a client up once
// to authenticate it and again for every stored request it loads, and a
// code exchange reads the code twice and its PKCE and OpenID sessions once
// each. One request is short enough that its view of a client or session
// need not change halfway; every write through the Store forgets what it
// changes. A nil *readCache caches nothing.
type readCache struct {
	mu       sync.Mutex
	clients  map[string]store.Client
	sessions map[store.TokenRef]store.TokenSession
	// links are the link states read with refresh sessions (Prefetch).
	links map[store.TokenRef]store.LinkState
	// urls are URL clients resolved in this request.
	urls map[string]cimd.Client
	// spent are codes redeemed in this request, as read before; folded are
	// companions read from their code's row (fold.go).
	spent  map[store.TokenRef]store.TokenSession
	folded map[store.TokenRef]bool
}

// newReadCache is an empty read cache, one request's (Begin, unless
// Options.NoReadCache).
func newReadCache() *readCache {
	return &readCache{
		clients:  map[string]store.Client{},
		sessions: map[store.TokenRef]store.TokenSession{},
		links:    map[store.TokenRef]store.LinkState{},
	}
}

// SeedClient records a client the caller already read in the read cache
// of ctx's request (Begin).
func SeedClient(ctx context.Context, c store.Client) { readsOf(ctx).putClient(c) }

// SeedURLClient records a URL client the caller already resolved in the
// read cache of ctx's request (Begin).
func SeedURLClient(ctx context.Context, c cimd.Client) { readsOf(ctx).putURLClient(c) }

func (rc *readCache) urlClient(id string) (cimd.Client, bool) {
	if rc == nil {
		return cimd.Client{}, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	c, ok := rc.urls[id]
	return c, ok
}

func (rc *readCache) putURLClient(c cimd.Client) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.urls == nil {
		rc.urls = map[string]cimd.Client{}
	}
	rc.urls[c.ID] = c
}

func (rc *readCache) client(id string) (store.Client, bool) {
	if rc == nil {
		return store.Client{}, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	c, ok := rc.clients[id]
	return c, ok
}

func (rc *readCache) putClient(c store.Client) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.clients[c.ID] = c
}

func (rc *readCache) session(ref store.TokenRef) (store.TokenSession, bool) {
	if rc == nil {
		return store.TokenSession{}, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	t, ok := rc.sessions[ref]
	return t, ok
}

// sessionLink returns a session read together with its link state.
func (rc *readCache) sessionLink(ref store.TokenRef) (store.TokenSession, store.LinkState, bool) {
	if rc == nil {
		return store.TokenSession{}, store.LinkState{}, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	t, ok := rc.sessions[ref]
	l, lok := rc.links[ref]
	return t, l, ok && lok
}

func (rc *readCache) putSessions(ts ...store.TokenSession) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, t := range ts {
		rc.sessions[store.TokenRef{Kind: t.Kind, SignatureHash: t.SignatureHash}] = t
	}
}

func (rc *readCache) putLink(ref store.TokenRef, l store.LinkState) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.links[ref] = l
}

// forget drops a session the request is about to change.
func (rc *readCache) forget(ref store.TokenRef) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	delete(rc.sessions, ref)
	delete(rc.links, ref)
}

// forgetSessions drops every session (a family revocation changed them).
func (rc *readCache) forgetSessions() {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	clear(rc.sessions)
	clear(rc.links)
}

// keepSpent keeps the cached code of ref, which is being redeemed, for the
// companions kept in its row (fold.go).
func (rc *readCache) keepSpent(ref store.TokenRef) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if t, ok := rc.sessions[ref]; ok {
		if rc.spent == nil {
			rc.spent = map[store.TokenRef]store.TokenSession{}
		}
		rc.spent[ref] = t
	}
}

// spentCode returns a code keepSpent kept.
func (rc *readCache) spentCode(ref store.TokenRef) (store.TokenSession, bool) {
	if rc == nil {
		return store.TokenSession{}, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	t, ok := rc.spent[ref]
	return t, ok
}

// markFolded records that the companion of ref was read from its code's
// row.
func (rc *readCache) markFolded(ref store.TokenRef) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.folded == nil {
		rc.folded = map[store.TokenRef]bool{}
	}
	rc.folded[ref] = true
}

// isFolded reports whether markFolded recorded ref.
func (rc *readCache) isFolded(ref store.TokenRef) bool {
	if rc == nil {
		return false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.folded[ref]
}

// companion returns the cached session of kind belonging to requestID.
func (rc *readCache) companion(kind store.TokenKind, requestID string) (store.TokenRef, bool) {
	if rc == nil {
		return store.TokenRef{}, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for ref, t := range rc.sessions {
		if ref.Kind == kind && t.RequestID == requestID {
			return ref, true
		}
	}
	return store.TokenRef{}, false
}

// Prefetch reads, in one statement, what a token request for clientID
// presenting token (a code or a refresh token, by kind; signature is
// fosite's signature of it) will ask for: the client, the session with its
// request's PKCE and OpenID sessions or its link. fosite keys a code's
// PKCE session by the code's signature and its OpenID session by the code
// itself, so all three are read by their keys. It fills ctx's read cache
// and does nothing without one or inside a transaction; an error leaves the
// cache as it was, and the regular reads follow.
func (st *Store) Prefetch(ctx context.Context, clientID string, kind store.TokenKind, token, signature string) {
	rc := readsOf(ctx)
	if rc == nil || clientID == "" || signature == "" || txOf(ctx) != nil {
		return
	}
	ref := store.TokenRef{Kind: kind, SignatureHash: store.HashSecret(signature)}
	var also []store.TokenRef
	if kind == store.KindAuthorizeCode {
		also = []store.TokenRef{{Kind: store.KindPKCE, SignatureHash: ref.SignatureHash},
			{Kind: store.KindOpenID, SignatureHash: store.HashSecret(token)}}
	}
	p, err := st.s.PrefetchTokenRequest(ctx, clientID, kind, ref.SignatureHash, also...)
	if err != nil {
		return
	}
	if p.ClientFound {
		rc.putClient(p.Client)
	}
	if len(p.Sessions) == 0 {
		return
	}
	rc.putSessions(p.Sessions...)
	if kind == store.KindRefreshToken {
		rc.putLink(ref, p.Link)
	}
}
