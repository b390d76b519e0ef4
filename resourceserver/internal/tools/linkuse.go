package tools

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// UseRecorder records that a link was used (store.Store's TouchLink,
// which itself writes at most once a minute per link, across every
// replica).
type UseRecorder interface {
	TouchLink(ctx context.Context, id string, now time.Time) error
}

// useEvery is how often one process asks the store to record a link's
// use: tool calls count as uses (Connected apps shows when an app last
// used its link, docs/reference.md §15), but most calls must not write.
const useEvery = time.Minute

// maxTracked bounds the throttle's memory: past it the map starts afresh,
// which costs at most one extra conditional UPDATE per link.
const maxTracked = 100_000

// useThrottle lets the first tool call of a link in each minute through
// to the store, and answers the others from memory without a write.
type useThrottle struct {
	rec   UseRecorder
	clock func() time.Time
	log   *slog.Logger

	mu   sync.Mutex
	last map[string]time.Time // link id → when this process last asked the store
}

func newUseThrottle(rec UseRecorder, clock func() time.Time, log *slog.Logger) *useThrottle {
	if rec == nil {
		return nil
	}
	if clock == nil {
		clock = time.Now
	}
	return &useThrottle{rec: rec, clock: clock, log: log, last: map[string]time.Time{}}
}

// used records a use of linkID, best-effort: a failure is logged and the
// tool call goes on.
func (u *useThrottle) used(ctx context.Context, linkID string) {
	if u == nil || linkID == "" {
		return
	}
	now := u.clock()
	u.mu.Lock()
	if prev, ok := u.last[linkID]; ok && now.Sub(prev) < useEvery && !now.Before(prev) {
		u.mu.Unlock()
		return
	}
	if len(u.last) >= maxTracked {
		u.last = map[string]time.Time{}
	}
	u.last[linkID] = now
	u.mu.Unlock()
	if err := u.rec.TouchLink(ctx, linkID, now); err != nil {
		u.log.WarnContext(ctx, "could not record the link's use", "link", linkID, "err", err)
	}
}
