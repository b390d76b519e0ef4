package fositestore

import (
	"context"
	"errors"
	"net/url"

	"github.com/ory/fosite"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/linkslot/linkslot/internal/store"
)

// A code's PKCE and OpenID sessions kept in the code's own row.
//
// fosite stores three sessions for every authorization: the code, keyed by
// its signature; the PKCE session, keyed by the same signature; and the
// OpenID session, keyed by the code itself. All three are copies of one
// request (fosite's Request.Sanitize: the same id, client, scopes, audience
// and session) that differ only in their form: the code keeps none, the
// PKCE session the challenge and its method, the OpenID session the
// nonce, prompt and the like. Stored as three rows, they are three heap
// tuples and twelve index entries written at every authorization and two
// deletions at every redemption.
//
// When the authorize endpoint's transaction stores them (tx.go), the two
// companions fold into the code's row instead: their forms are added to
// the code's stored request (storedRequest.PKCEForm, OpenIDForm) before
// the batch is written, so an authorization writes one row and a
// redemption deletes none. What fosite reads back is what the separate
// rows would have given:
//   - GetPKCERequestSession and GetOpenIDConnectSession answer the code's
//     request with the companion's form.
//   - The PKCE session is there while the code is unused. Deleting it uses
//     the code up: between BeginDeferral and EndDeferral, as the token
//     endpoint always runs, the redemption's own deactivation does that,
//     and a failed request (a wrong verifier) deactivates the code at
//     EndDeferral, so that the right verifier after a wrong one still
//     fails (fosite answers that the code was used). Outside a deferral the deletion does nothing: fosite deletes
//     the PKCE session before it redeems the code.
//   - The OpenID session is read after the redemption, in the same
//     request, from the code deactivated there (readCache.keepSpent);
//     deleting it does nothing, since the redemption used up its row.
//
// A companion stored outside such a transaction, or after the batch was
// written, is a row of its own, and so are those of codes stored before
// folding: every read tries the row of its own first where the prefetch
// found one, so both kinds of code redeem alike.

// companions are the forms of the companions kept in a code's row; nil
// for one that is not.
type companions struct {
	pkce, openid url.Values
}

// pendingCode is the code of a transaction's pending batch.
type pendingCode struct {
	i                  int // its index in the batch's Create
	requestID, client  string
	signatureHash      string
	session            *Session
	hasPKCE, hasOpenID bool
}

// addCode adds a code to the pending batch, where its request's companions
// can fold into it.
func (ts *txState) addCode(t store.TokenSession, r fosite.Requester, sess *Session) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.ended {
		return errors.New("fositestore: transaction already ended")
	}
	ts.pending.Create = append(ts.pending.Create, t)
	ts.code = &pendingCode{i: len(ts.pending.Create) - 1, requestID: r.GetID(), client: r.GetClient().GetID(),
		signatureHash: t.SignatureHash, session: sess}
	return nil
}

// fold adds the form of a PKCE (keyed by sigHash, the code's signature's
// hash) or OpenID session to the pending code of the same request and
// reports whether it did. It does not when there is no such code (outside
// a transaction, or after the batch was written), or when r is not a copy
// of the code's request: a different request, client or session.
func (ts *txState) fold(kind store.TokenKind, sigHash string, r fosite.Requester, sess *Session) (bool, error) {
	if ts == nil {
		return false, nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	c := ts.code
	if c == nil || ts.ended || r.GetID() != c.requestID || r.GetClient().GetID() != c.client || sess != c.session {
		return false, nil
	}
	key := `,"openid_form":`
	switch {
	case kind == store.KindPKCE && !c.hasPKCE && sigHash == c.signatureHash:
		key, c.hasPKCE = `,"pkce_form":`, true
	case kind == store.KindOpenID && !c.hasOpenID:
		c.hasOpenID = true
	default:
		return false, nil
	}
	form := r.GetRequestForm()
	if form == nil {
		form = url.Values{} // present, if empty
	}
	raw, err := fastjson.Marshal(form)
	if err != nil {
		return false, err
	}
	// The stored request is one JSON object: the field goes before its
	// closing brace.
	t := &ts.pending.Create[c.i]
	req := make([]byte, 0, len(t.Request)+len(key)+len(raw))
	req = append(append(append(req, t.Request[:len(t.Request)-1]...), key...), raw...)
	t.Request = append(req, '}')
	return true, nil
}

// UseCodeSignature gives the store fosite's code signature, by which a
// code's OpenID session, asked for by the code itself, finds the code's
// row. Without it, such a session is found through the read cache only.
func (st *Store) UseCodeSignature(sig func(ctx context.Context, code string) string) {
	st.codeSignature = sig
}

// codeHashOf is the hash of fosite's signature of code, by which its row is
// keyed; ok is false without UseCodeSignature.
func (st *Store) codeHashOf(ctx context.Context, code string) (sigHash string, ok bool) {
	if st.codeSignature == nil {
		return "", false
	}
	return store.HashSecret(st.codeSignature(ctx, code)), true
}

// keptIn is the companions kept in the row of the code of sigHash; none
// when there is no such code or it cannot be read.
func (st *Store) keptIn(ctx context.Context, sigHash string) companions {
	k, found, err := st.folded(ctx, sigHash, nil)
	if err != nil || !found {
		return companions{}
	}
	return k.companions
}

// keptCode is a code read for a companion kept in its row.
type keptCode struct {
	req *fosite.Request // the code's request
	companions
	active bool
	// spentHere: the code was redeemed earlier in this request.
	spentHere bool
}

// folded reads the code of sigHash for a companion kept in its row, its
// request decoded into into; found is false when there is no such code. A
// code redeemed earlier in this request is read from the read cache.
func (st *Store) folded(ctx context.Context, sigHash string, into fosite.Session) (k keptCode, found bool, err error) {
	ref := store.TokenRef{Kind: store.KindAuthorizeCode, SignatureHash: sigHash}
	t, spent := readsOf(ctx).spentCode(ref)
	if !spent {
		t, err = st.load(ctx, store.KindAuthorizeCode, sigHash)
		if errors.Is(err, store.ErrNotFound) {
			return keptCode{}, false, nil
		}
		if err != nil {
			return keptCode{}, false, err
		}
	}
	req, c, err := st.decodeWith(ctx, t.Request, into)
	if err != nil {
		return keptCode{}, false, err
	}
	return keptCode{req: req, companions: c, active: t.Active, spentHere: spent}, true, nil
}

// withForm is req with form for its form.
func withForm(req *fosite.Request, form url.Values) *fosite.Request {
	req.Form = form
	return req
}
