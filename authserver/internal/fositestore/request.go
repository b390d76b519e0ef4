package fositestore

import "context"

// Request is the storage's state for one HTTP request: what the fast paths
// chosen by Options keep between the storage calls fosite makes for it
// (the read cache, readcache.go; the joined deletions, joined.go), and
// the refresh grace's view of it (grace.go). Begin sets it up; it is not
// shared between requests.
type Request struct {
	reads   *readCache
	joined  *joinedDeletes
	refresh refreshState
}

type requestKey struct{}

// Begin returns ctx carrying a fresh Request, as the Store's Options
// configure it. A ctx that carries one already is returned as it is, so
// every step of one request may call Begin and they share one state.
// provider.Provider calls it at each of its entry points (token,
// authorize, revocation, introspection): a handler calling the provider
// prepares nothing. A nil Store answers ctx.
func (st *Store) Begin(ctx context.Context) context.Context {
	if st == nil || RequestOf(ctx) != nil {
		return ctx
	}
	req := &Request{}
	if !st.opts.NoReadCache {
		req.reads = newReadCache()
	}
	if !st.opts.NoJoinedDeletes {
		req.joined = newJoinedDeletes()
	}
	return req.Into(ctx)
}

// RequestOf is the Request ctx carries (nil: none).
func RequestOf(ctx context.Context) *Request {
	req, _ := ctx.Value(requestKey{}).(*Request)
	return req
}

// Into returns ctx carrying req, for a later step of the request req was
// begun for (provider.Provider carries it from NewAccessRequest to
// NewAccessResponse in the access request). A nil req answers ctx.
func (req *Request) Into(ctx context.Context) context.Context {
	if req == nil {
		return ctx
	}
	return context.WithValue(ctx, requestKey{}, req)
}

// readsOf is the read cache of ctx's request (nil: none).
func readsOf(ctx context.Context) *readCache {
	if req := RequestOf(ctx); req != nil {
		return req.reads
	}
	return nil
}

// joinedOf is the joined deletions of ctx's request (nil: none).
func joinedOf(ctx context.Context) *joinedDeletes {
	if req := RequestOf(ctx); req != nil {
		return req.joined
	}
	return nil
}

// refreshOf is the refresh grace's view of ctx's request (nil: none).
func refreshOf(ctx context.Context) *refreshState {
	if req := RequestOf(ctx); req != nil {
		return &req.refresh
	}
	return nil
}
