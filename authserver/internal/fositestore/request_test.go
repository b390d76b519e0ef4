package fositestore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ory/fosite"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestBeginSharesOneRequest: Begin on a context that carries a request's
// state keeps it, and so does a context it is carried Into, so the steps of
// one request share one read cache; the read cache is the configuration's
// choice (Options.NoReadCache), not the caller's.
func TestBeginSharesOneRequest(t *testing.T) {
	s := sqltest.SQLite(t)
	f := setup(t, s)
	bg := context.Background()
	if fositestore.RequestOf(bg) != nil {
		t.Fatal("a bare context carries a request")
	}
	ctx := f.fs.Begin(bg)
	req := fositestore.RequestOf(ctx)
	if req == nil || fositestore.RequestOf(f.fs.Begin(ctx)) != req || fositestore.RequestOf(req.Into(bg)) != req {
		t.Fatal("Begin or Into did not keep the request's state")
	}
	slow := fositestore.New(s, fositestore.Options{NoReadCache: true})
	slowCtx := slow.Begin(bg)
	if _, err := f.fs.GetClient(ctx, "app"); err != nil {
		t.Fatal(err)
	}
	if _, err := slow.GetClient(slowCtx, "app"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateClient(bg, "app", func(c store.Client) (store.Client, error) { c.Disabled = true; return c, nil }); err != nil {
		t.Fatal(err)
	}
	// Within the request, the client read is the one read before; a new
	// request, or a store without the read cache, reads it again.
	if _, err := f.fs.GetClient(req.Into(bg), "app"); err != nil {
		t.Fatalf("cached client: %v", err)
	}
	if _, err := f.fs.GetClient(f.fs.Begin(bg), "app"); !errors.Is(err, fosite.ErrNotFound) {
		t.Errorf("new request: disabled client: %v, want fosite.ErrNotFound", err)
	}
	if _, err := slow.GetClient(slowCtx, "app"); !errors.Is(err, fosite.ErrNotFound) {
		t.Errorf("no read cache: disabled client: %v, want fosite.ErrNotFound", err)
	}
}
