package tools

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
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
// to the store, and answers the others from memory without a write. The
// hot path is a lock-free map read.
type useThrottle struct {
	rec   UseRecorder
	clock func() time.Time
	log   *slog.Logger

	last    sync.Map // link id → int64 UnixNano of when this process last asked the store
	tracked atomic.Int64
}

func newUseThrottle(rec UseRecorder, clock func() time.Time, log *slog.Logger) *useThrottle {
	if rec == nil {
		return nil
	}
	if clock == nil {
		clock = time.Now
	}
	return &useThrottle{rec: rec, clock: clock, log: log}
}

// used records a use of linkID, best-effort: a failure is logged and the
// tool call goes on. Of concurrent calls for one link, one asks the store.
func (u *useThrottle) used(ctx context.Context, linkID string) {
	if u == nil || linkID == "" {
		return
	}
	now := u.clock()
	at := now.UnixNano()
	if prev, ok := u.last.Load(linkID); ok {
		p := prev.(int64)
		if d := at - p; d >= 0 && d < int64(useEvery) {
			return
		}
		if !u.last.CompareAndSwap(linkID, prev, at) {
			return // another call took this turn
		}
	} else {
		if _, loaded := u.last.LoadOrStore(linkID, at); loaded {
			return
		}
		if u.tracked.Add(1) > maxTracked {
			u.last.Clear()
			u.tracked.Store(0)
		}
	}
	if err := u.rec.TouchLink(ctx, linkID, now); err != nil {
		u.log.WarnContext(ctx, "could not record the link's use", "link", linkID, "err", err)
	}
}
