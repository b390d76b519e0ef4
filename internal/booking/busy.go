package booking

import (
	"context"
	"sync"
	"time"
)

// maxBusyKept bounds the days of calendar busy times kept in memory (one
// entry per business, calendar tag and window asked); past it, an
// arbitrary entry is evicted for each new one, as in the catalog cache.
const maxBusyKept = 5000

// busyKey is the busy times of a business's connected calendars over one
// window, as stored under one calendar tag.
type busyKey struct {
	businessID, tag string
	from, to        int64 // Unix nanoseconds
}

// busyCache keeps the busy times of connected calendars by the business's
// calendar tag (store.StaffDay.CalendarTag; docs/calendars.md
// "Availability"). A tag names one state of the stored busy times of all
// the business's calendars, and whatever changes them draws a new one, so
// an entry is never stale: a changed calendar is asked for under a tag no
// entry has. Entries of old tags are evicted as the cache fills. An entry
// is never modified once kept.
type busyCache struct {
	mu   sync.Mutex
	kept map[busyKey]map[string][]block // by staff id
}

func (c *busyCache) get(k busyKey) (map[string][]block, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.kept[k]
	return b, ok
}

func (c *busyCache) put(k busyKey, b map[string][]block) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept == nil {
		c.kept = map[busyKey]map[string][]block{}
	}
	if _, ok := c.kept[k]; !ok && len(c.kept) >= maxBusyKept {
		for old := range c.kept {
			delete(c.kept, old)
			break
		}
	}
	c.kept[k] = b
}

// calendarBusy answers, by staff id, the busy times that the connected
// calendars of business businessID block in [from, to) under calendar tag
// tag: those kept under it, or else read in one statement
// (store.CalendarBusyDay) and kept under the tag they were read with (a
// sync that committed since the tag was read only makes the answer newer).
// The answer is shared: callers do not modify it.
func (s *Service) calendarBusy(ctx context.Context, businessID, tag string, from, to time.Time) (map[string][]block, error) {
	k := busyKey{businessID: businessID, tag: tag, from: from.UnixNano(), to: to.UnixNano()}
	if b, ok := s.busy.get(k); ok {
		return b, nil
	}
	d, err := s.store.CalendarBusyDay(ctx, businessID, from, to)
	if err != nil {
		return nil, err
	}
	byStaff := map[string][]block{}
	for _, b := range d.Busy {
		byStaff[b.StaffID] = append(byStaff[b.StaffID], block{id: b.BookingID, staffID: b.StaffID, start: b.BlockStart, end: b.BlockEnd})
	}
	k.tag = d.Tag
	s.busy.put(k, byStaff)
	return byStaff, nil
}
