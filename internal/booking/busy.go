package booking

import (
	"context"
	"errors"
	"sync"
	"time"
)

// maxBusyKept bounds the days of calendar busy times kept in memory (one
// entry per business and window asked); past it, an arbitrary entry is
// evicted for each new one, as in the catalog cache.
const maxBusyKept = 5000

// busyKey is one business's calendars over one window.
type busyKey struct {
	businessID string
	from, to   int64 // Unix nanoseconds
}

// busyDay is the busy times of a business's connected calendars over one
// window as one snapshot held them: the business's calendar tag then, and
// each calendar's busy tag and blocks. It is never modified once kept.
type busyDay struct {
	tag   string
	staff map[string]staffBusy // by staff id
}

type staffBusy struct {
	tag    string
	blocks []block
}

// busyCache keeps the busy times of connected calendars (docs/calendars.md
// "Availability"). The business's calendar tag names one state of all its
// calendars' stored busy times and whatever changes them draws a new one,
// so a day kept under the tag store.StaffDay reads is current. When it is
// not, the day is read again, but the calendars whose own busy tag did not
// change are not: their blocks are taken from the day kept before.
type busyCache struct {
	mu   sync.Mutex
	kept map[busyKey]*busyDay
}

func (c *busyCache) get(k busyKey) *busyDay {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept[k]
}

func (c *busyCache) put(k busyKey, d *busyDay) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept == nil {
		c.kept = map[busyKey]*busyDay{}
	}
	if _, ok := c.kept[k]; !ok && len(c.kept) >= maxBusyKept {
		for old := range c.kept {
			delete(c.kept, old)
			break
		}
	}
	c.kept[k] = d
}

// calendarBusy answers the busy times that the connected calendars of
// business businessID block in [from, to), by staff id, under its calendar
// tag tag: the day kept under it, or else the day read again in one
// statement (store.CalendarBusyDay) — only the calendars whose busy tag
// changed since the day kept before — and kept under the tag it was read
// with (a sync that committed since tag was read only makes the answer
// newer). The answer is shared: callers do not modify it.
func (s *Service) calendarBusy(ctx context.Context, businessID, tag string, from, to time.Time) (*busyDay, error) {
	k := busyKey{businessID: businessID, from: from.UnixNano(), to: to.UnixNano()}
	old := s.busy.get(k)
	if old != nil && old.tag == tag {
		return old, nil
	}
	var known []string
	if old != nil {
		for _, sb := range old.staff {
			known = append(known, sb.tag)
		}
	}
	for range 2 {
		d, err := s.store.CalendarBusyDay(ctx, businessID, from, to, known)
		if err != nil {
			return nil, err
		}
		day := &busyDay{tag: d.Tag, staff: make(map[string]staffBusy, len(d.Staff))}
		complete := true
		for _, c := range d.Staff {
			if c.Known {
				prev, ok := old.staff[c.StaffID]
				if !ok || prev.tag != c.BusyTag {
					complete = false // another calendar's tag: read everything
					break
				}
				day.staff[c.StaffID] = prev
				continue
			}
			blocks := make([]block, len(c.Busy))
			for i, b := range c.Busy {
				blocks[i] = block{id: b.BookingID, staffID: b.StaffID, start: b.BlockStart, end: b.BlockEnd}
			}
			day.staff[c.StaffID] = staffBusy{tag: c.BusyTag, blocks: blocks}
		}
		if complete {
			s.busy.put(k, day)
			return day, nil
		}
		known = nil
	}
	return nil, errors.New("booking: calendar busy times read without known tags came back known")
}
