package rshttp_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// touchCounter is the store with its TouchLink calls counted.
type touchCounter struct {
	store.Store
	n atomic.Int64
}

func (c *touchCounter) TouchLink(ctx context.Context, id string, now time.Time) error {
	c.n.Add(1)
	return c.Store.TouchLink(ctx, id, now)
}

// TestToolCallsRecordLinkUse: tool calls count as uses of the link
// (Connected apps shows when an app last used it, docs/reference.md §15),
// recorded at once for a link not used yet and then at most once a minute,
// without a write, or even a store call, for the calls in between.
func TestToolCallsRecordLinkUse(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		counted := &touchCounter{Store: s}
		e := newEnv(t, envOpts{store: s, serve: counted, noLimits: true})
		lastUsed := func() time.Time {
			t.Helper()
			l, err := s.GetLink(e.ctx, e.link.ID)
			if err != nil {
				t.Fatal(err)
			}
			return l.LastUsedAt
		}
		if !lastUsed().Equal(e.link.CreatedAt) {
			t.Fatalf("a new link is used at %v, created %v", lastUsed(), e.link.CreatedAt)
		}
		cs := e.session(e.token(nil), "2025-06-18")
		call := func() {
			t.Helper()
			res, err := cs.CallTool(e.ctx, &mcp.CallToolParams{Name: "search_bookable_business", Arguments: map[string]any{"query": "cut"}})
			if err != nil || res.IsError {
				t.Fatalf("tool call: %v %+v", err, res)
			}
		}
		e.clock.Advance(10 * time.Second)
		first := e.clock.Now()
		call()
		if got := lastUsed(); !got.Equal(first) {
			t.Fatalf("after the first tool call LastUsedAt = %v, want %v (the call)", got, first)
		}
		for range 5 {
			e.clock.Advance(5 * time.Second)
			call()
		}
		if got := lastUsed(); !got.Equal(first) {
			t.Errorf("calls within the minute moved LastUsedAt to %v", got)
		}
		if n := counted.n.Load(); n != 1 {
			t.Errorf("%d TouchLink calls for 6 tool calls within a minute, want 1", n)
		}
		e.clock.Advance(time.Minute)
		later := e.clock.Now()
		call()
		if got := lastUsed(); !got.Equal(later) {
			t.Errorf("a call a minute later: LastUsedAt = %v, want %v", got, later)
		}
		if n := counted.n.Load(); n != 2 {
			t.Errorf("%d TouchLink calls, want 2", n)
		}
	})
}
