package calendar

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	goical "github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

// Span is one busy time.
type Span struct {
	Start, End time.Time
}

// maxOccurrences bounds the instances one recurring event adds within the
// window, so that an event repeating every minute cannot fill the table.
const maxOccurrences = 5000

// Busy expands the busy times of cal's events that intersect [from, to):
// opaque events, recurring ones expanded in their own zone (loc for
// floating times and zones Go does not know), all-day ones from midnight
// to midnight in loc, with EXDATE and cancelled or moved instances
// (RECURRENCE-ID) honoured. Events marked TRANSPARENT or CANCELLED, and
// those whose UID skip reports (Linkslot's own bookings), add nothing.
func Busy(cal *goical.Calendar, loc *time.Location, from, to time.Time, skip func(uid string) bool) ([]Span, error) {
	type series struct {
		master    *goical.Component
		overrides []*goical.Component
	}
	byUID := map[string]*series{}
	var order []string
	for _, c := range cal.Children {
		if c.Name != goical.CompEvent {
			continue
		}
		uid, _ := c.Props.Text(goical.PropUID)
		if skip != nil && uid != "" && skip(uid) {
			continue
		}
		s := byUID[uid]
		if s == nil || uid == "" {
			s = &series{}
			byUID[uid] = s
			order = append(order, uid)
		}
		if c.Props.Get(goical.PropRecurrenceID) != nil {
			s.overrides = append(s.overrides, c)
		} else {
			s.master = c
		}
	}
	var out []Span
	for _, uid := range order {
		s := byUID[uid]
		// Instances an override replaces (moved, cancelled, or changed).
		replaced := map[int64]bool{}
		for _, o := range s.overrides {
			rid, err := dateTime(o.Props.Get(goical.PropRecurrenceID), loc)
			if err != nil {
				return nil, eventErr(uid, err)
			}
			replaced[rid.Unix()] = true
			sp, busy, err := single(o, loc)
			if err != nil {
				return nil, eventErr(uid, err)
			}
			if busy && sp.Start.Before(to) && sp.End.After(from) {
				out = append(out, sp)
			}
		}
		if s.master == nil {
			continue
		}
		sp, busy, err := single(s.master, loc)
		if err != nil {
			return nil, eventErr(uid, err)
		}
		if !busy {
			continue
		}
		set, err := recurrence(s.master, sp.Start, loc)
		if err != nil {
			return nil, eventErr(uid, err)
		}
		if set == nil {
			if sp.Start.Before(to) && sp.End.After(from) {
				out = append(out, sp)
			}
			continue
		}
		dur := sp.End.Sub(sp.Start)
		n := 0
		it := set.Iterator()
		for t, ok := it(); ok; t, ok = it() {
			if !t.Before(to) {
				break
			}
			if replaced[t.Unix()] || !t.Add(dur).After(from) {
				continue
			}
			if n++; n > maxOccurrences {
				break
			}
			out = append(out, Span{Start: t, End: t.Add(dur)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out, nil
}

func eventErr(uid string, err error) error {
	if uid == "" {
		return fmt.Errorf("an event without a UID: %w", err)
	}
	return fmt.Errorf("event %q: %w", uid, err)
}

// single is one event's own span, and whether it makes its time busy.
func single(c *goical.Component, loc *time.Location) (Span, bool, error) {
	startProp := c.Props.Get(goical.PropDateTimeStart)
	if startProp == nil {
		return Span{}, false, errors.New("it has no DTSTART")
	}
	start, err := dateTime(startProp, loc)
	if err != nil {
		return Span{}, false, err
	}
	end := start
	allDay := isDate(startProp)
	switch {
	case c.Props.Get(goical.PropDateTimeEnd) != nil:
		if end, err = dateTime(c.Props.Get(goical.PropDateTimeEnd), loc); err != nil {
			return Span{}, false, err
		}
	case c.Props.Get(goical.PropDuration) != nil:
		d, err := c.Props.Get(goical.PropDuration).Duration()
		if err != nil {
			return Span{}, false, err
		}
		if allDay && d%(24*time.Hour) == 0 {
			y, m, dd := start.Date()
			end = time.Date(y, m, dd+int(d/(24*time.Hour)), 0, 0, 0, 0, loc)
		} else {
			end = start.Add(d)
		}
	case allDay:
		y, m, d := start.Date()
		end = time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	}
	busy := end.After(start)
	if p := c.Props.Get(goical.PropTransparency); p != nil && strings.EqualFold(strings.TrimSpace(p.Value), "TRANSPARENT") {
		busy = false
	}
	if p := c.Props.Get(goical.PropStatus); p != nil && strings.EqualFold(strings.TrimSpace(p.Value), "CANCELLED") {
		busy = false
	}
	return Span{Start: start, End: end}, busy, nil
}

func isDate(p *goical.Prop) bool {
	return p.ValueType() == goical.ValueDate || (p.ValueType() == goical.ValueDefault && len(strings.TrimSpace(p.Value)) == 8)
}

// dateTime reads a DATE or DATE-TIME value: UTC, in its TZID's zone, or in
// loc when floating or when the TZID is not an IANA name Go knows (an
// Outlook zone name, say).
func dateTime(p *goical.Prop, loc *time.Location) (time.Time, error) {
	return valueTime(p, strings.TrimSpace(p.Value), loc)
}

func valueTime(p *goical.Prop, v string, loc *time.Location) (time.Time, error) {
	if p == nil {
		return time.Time{}, errors.New("a missing date")
	}
	zone := loc
	if tzid := p.Params.Get(goical.PropTimezoneID); tzid != "" {
		if z, err := time.LoadLocation(strings.Trim(tzid, `"/`)); err == nil {
			zone = z
		}
	}
	switch {
	case len(v) == 8:
		return time.ParseInLocation("20060102", v, zone)
	case strings.HasSuffix(v, "Z"):
		return time.Parse("20060102T150405Z", v)
	default:
		return time.ParseInLocation("20060102T150405", v, zone)
	}
}

// recurrence builds the event's recurrence set from RRULE, RDATE and
// EXDATE (each may list several values), starting at start; nil when it
// does not recur.
func recurrence(c *goical.Component, start time.Time, loc *time.Location) (*rrule.Set, error) {
	ro, err := c.Props.RecurrenceRule()
	if err != nil {
		return nil, fmt.Errorf("its RRULE does not parse: %w", err)
	}
	rdates := c.Props.Values(goical.PropRecurrenceDates)
	if ro == nil && len(rdates) == 0 {
		return nil, nil
	}
	set := &rrule.Set{}
	if ro != nil {
		ro.Dtstart = start
		r, err := rrule.NewRRule(*ro)
		if err != nil {
			return nil, fmt.Errorf("its RRULE does not parse: %w", err)
		}
		set.RRule(r)
	}
	set.DTStart(start)
	if ro == nil {
		set.RDate(start) // DTSTART is the first instance of an RDATE-only event
	}
	add := func(props []goical.Prop, f func(time.Time)) error {
		for i := range props {
			for _, v := range strings.Split(props[i].Value, ",") {
				if v = strings.TrimSpace(v); v == "" || strings.Contains(v, "/") {
					continue // a PERIOD value: its start is enough for EXDATE, rare in RDATE
				}
				t, err := valueTime(&props[i], v, loc)
				if err != nil {
					return err
				}
				f(t)
			}
		}
		return nil
	}
	if err := add(rdates, set.RDate); err != nil {
		return nil, err
	}
	if err := add(c.Props.Values(goical.PropExceptionDates), set.ExDate); err != nil {
		return nil, err
	}
	return set, nil
}
