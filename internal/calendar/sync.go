package calendar

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	goical "github.com/emersion/go-ical"
	"github.com/emersion/go-webdav/caldav"
	"github.com/emersion/go-webdav/carddav"

	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/store"
)

// Defaults of Service's zero fields.
const (
	DefaultInterval = 10 * time.Minute // how often every calendar is synced
	DefaultAhead    = 366 * 24 * time.Hour
	lease           = 2 * time.Minute // one sync's hold on a calendar
	multigetBatch   = 200
)

// Store is what the calendars read and write.
type Store interface {
	store.Calendars
	GetBooking(ctx context.Context, id string) (store.Booking, error)
	LoadCatalogByID(ctx context.Context, businessID string) (store.Catalog, error)
}

// Service syncs connected calendars and writes bookings into them.
type Service struct {
	Store  Store
	Sealer *keys.Sealer // seals calendar passwords (LINKSLOT_SECRET_KEY)
	// Host is the issuer's host: events whose UID ends with @Host are
	// Linkslot's own bookings, never busy times.
	Host        string
	Development bool                  // loopback URLs allowed (development and tests)
	Dial        safefetch.DialOptions // resolver, CAs (tests)
	Clock       store.Clock
	Logger      *slog.Logger
	Owner       string        // lease holder (default: a random id)
	Interval    time.Duration // DefaultInterval
	Ahead       time.Duration // DefaultAhead: how far ahead busy times are stored
	Timeout     time.Duration // Timeout: one exchange with a calendar server
	Metrics     *Metrics      // nil: no sync metrics
	// Freed, when set, is told of every span a sync found busy no longer
	// (an event deleted or moved), after the sync committed: the
	// authorization server offers it to the waitlist
	// (mutation.Service.SpanFreed; docs/design.md "The waitlist", "Freed
	// spans"). A failure is logged; the sync stands.
	Freed func(ctx context.Context, businessID, staffID string, start, end time.Time) error
}

func (s *Service) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return Timeout
}

// NewSealer derives the sealer of calendar passwords from the secret key.
func NewSealer(secretKey []byte) *keys.Sealer {
	return keys.NewSealer(secretKey, "linkslot calendar passwords")
}

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return time.Now().UTC()
	}
	return store.UTC(s.Clock())
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

func (s *Service) owner() string {
	if s.Owner == "" {
		s.Owner = store.LeaseHolder()
	}
	return s.Owner
}

// Connect is a calendar to set for a staff member.
type Connect struct {
	StaffID, BusinessID string
	Kind                string // store.CalendarCalDAV or store.CalendarICS
	URL                 string
	Username, Password  string // CalDAV only
	// Previous is the calendar this one replaces, if any: with Password
	// empty, its sealed password is kept when the new calendar is CalDAV
	// on the same server (scheme, host and port) with the same user name,
	// so that moving to another calendar of the same account does not
	// ask for the password again, and the stored password is never sent
	// to another server.
	Previous *store.StaffCalendar
}

// Set validates and stores a staff member's calendar (replacing any
// other), sealing its password. It does not sync: the caller syncs next.
func (s *Service) Set(ctx context.Context, c Connect) error {
	row, err := s.Prepare(c)
	if err != nil {
		return err
	}
	return s.Store.PutStaffCalendar(ctx, row)
}

// Prepare validates a calendar to connect and answers its row, the
// password sealed, for the caller to store (admin.Service stores it with
// its audit event).
func (s *Service) Prepare(c Connect) (store.StaffCalendar, error) {
	if _, err := safefetch.CheckURL(c.URL, s.Development); err != nil {
		return store.StaffCalendar{}, problem.New(problem.CodeInvalidArgument, "The calendar URL must be an https URL without a user name or password in it.").WithField("url")
	}
	row := store.StaffCalendar{StaffID: c.StaffID, BusinessID: c.BusinessID, Kind: c.Kind, URL: c.URL, UpdatedAt: s.now()}
	switch c.Kind {
	case store.CalendarCalDAV:
		if c.Username == "" {
			return store.StaffCalendar{}, problem.New(problem.CodeInvalidArgument, "A CalDAV calendar needs a user name and a password.").WithField("username")
		}
		if s.Sealer == nil {
			return store.StaffCalendar{}, errors.New("calendar: no sealer for passwords")
		}
		row.Username = c.Username
		switch {
		case c.Password != "":
			row.PasswordSealed = s.Sealer.Seal([]byte(c.Password), []byte(c.StaffID))
		case sameAccount(c):
			row.PasswordSealed = c.Previous.PasswordSealed
		case c.Previous != nil && c.Previous.Kind == store.CalendarCalDAV:
			return store.StaffCalendar{}, problem.New(problem.CodeInvalidArgument, "Type the password: the stored one is kept only while the server and the user name stay the same.").WithField("password")
		default:
			return store.StaffCalendar{}, problem.New(problem.CodeInvalidArgument, "A CalDAV calendar needs a user name and a password.").WithField("password")
		}
	case store.CalendarICS:
		if c.Username != "" || c.Password != "" {
			return store.StaffCalendar{}, problem.New(problem.CodeInvalidArgument, "An iCalendar URL takes no user name or password.").WithField("username")
		}
	default:
		return store.StaffCalendar{}, problem.New(problem.CodeInvalidArgument, "The calendar kind is caldav or ics.").WithField("kind")
	}
	return row, nil
}

// sameAccount: c replaces a CalDAV calendar of the same staff member on
// the same server (scheme, host and port, compared as URLs) with the same
// user name, whose password c may keep.
func sameAccount(c Connect) bool {
	p := c.Previous
	if p == nil || p.Kind != store.CalendarCalDAV || p.StaffID != c.StaffID || p.Username != c.Username || len(p.PasswordSealed) == 0 {
		return false
	}
	a, err1 := url.Parse(p.URL)
	b, err2 := url.Parse(c.URL)
	return err1 == nil && err2 == nil && strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// Result is one sync's outcome.
type Result struct {
	Skipped bool // another process holds the calendar's lease
	Objects int  // objects fetched (changed since the last sync)
	Removed int
	Busy    int // busy times stored after it
	// Full: every busy time was expanded again (a first sync, or the
	// window moved), the unchanged objects from their stored text.
	Full bool
	// Listed: the whole collection was listed (no sync token, or the
	// server refused it); otherwise only what changed since the token
	// was asked for. An iCalendar URL is always read whole.
	Listed bool
	// Freed are the spans from now on that were busy before the sync and
	// are not after it, merged (found only when Service.Freed is set).
	Freed []Span
}

// Sync syncs one staff member's calendar now, unless another process is
// syncing it. A failure is stored as the calendar's last error and
// answered as a *Problem; the busy times stay as the last good sync left
// them.
func (s *Service) Sync(ctx context.Context, staffID string) (Result, error) {
	now := s.now()
	name := "calendar-sync:" + staffID
	ok, err := s.Store.TryLease(ctx, name, s.owner(), now, now.Add(lease))
	if err != nil {
		return Result{}, err
	}
	if !ok {
		return Result{Skipped: true}, nil
	}
	defer func() { _ = s.Store.ReleaseLease(context.WithoutCancel(ctx), name, s.owner()) }()
	cal, err := s.Store.GetStaffCalendar(ctx, staffID)
	if err != nil {
		return Result{}, err
	}
	cat, err := s.Store.LoadCatalogByID(ctx, cal.BusinessID)
	if err != nil {
		return Result{}, err
	}
	loc, err := time.LoadLocation(cat.Business.TimeZone)
	if err != nil {
		return Result{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, lease-10*time.Second)
	defer cancel()
	began := time.Now()
	var res Result
	switch cal.Kind {
	case store.CalendarCalDAV:
		res, err = s.syncCalDAV(sctx, cal, loc, now)
	default:
		res, err = s.syncICS(sctx, cal, loc, now)
	}
	s.Metrics.observe(cal.Kind, res, err, time.Since(began))
	if err != nil {
		p := explain(err, 0)
		s.log().WarnContext(ctx, "calendar sync failed", "staff", staffID, "kind", cal.Kind, "error", p.Message, "cause", scrub(err))
		if rerr := s.Store.RecordCalendarError(context.WithoutCancel(ctx), staffID, s.now(), p.Message); rerr != nil {
			return Result{}, rerr
		}
		return Result{}, p
	}
	s.log().InfoContext(ctx, "calendar synced", "staff", staffID, "kind", cal.Kind, "fetched", res.Objects, "removed", res.Removed, "busy", res.Busy, "full", res.Full, "listed", res.Listed, "freed", len(res.Freed))
	// The sync has committed: the time it freed is offered now, each span
	// in a transaction of its own (docs/calendars.md "Freed time").
	for _, sp := range res.Freed {
		if err := s.Freed(ctx, cal.BusinessID, staffID, sp.Start, sp.End); err != nil {
			s.log().WarnContext(ctx, "calendar: offering freed time to the waitlist", "staff", staffID,
				"start", sp.Start, "end", sp.End, "err", err)
		}
	}
	return res, nil
}

// apply writes a sync that read the calendar (store.Calendars.
// ApplyCalendarSync) and, when Freed is set, answers the spans from now
// to the end of the old or new window that were busy before it and are
// not after it: the busy times stored before are read first, and what
// stays of them (all of them are dropped when sync.Replace, those of
// sync.Remove and sync.Upsert otherwise) with sync.Busy is what the sync
// leaves. One process syncs a calendar at a time (the lease), so nothing
// else writes them in between.
func (s *Service) apply(ctx context.Context, cal store.StaffCalendar, sync store.CalendarSync, now time.Time) ([]Span, error) {
	if s.Freed == nil {
		return nil, s.Store.ApplyCalendarSync(ctx, sync)
	}
	end := cal.WindowEnd
	if sync.WindowEnd.After(end) {
		end = sync.WindowEnd
	}
	before, err := s.Store.ListCalendarBusy(ctx, cal.StaffID, now, end)
	if err != nil {
		return nil, err
	}
	if err := s.Store.ApplyCalendarSync(ctx, sync); err != nil {
		return nil, err
	}
	if len(before) == 0 {
		return nil, nil
	}
	after := append([]store.CalendarBusy(nil), sync.Busy...)
	if !sync.Replace {
		gone := map[string]bool{}
		for _, h := range sync.Remove {
			gone[h] = true
		}
		for _, o := range sync.Upsert {
			gone[o.Href] = true
		}
		for _, b := range before {
			if !gone[b.Href] {
				after = append(after, b)
			}
		}
	}
	return freed(merge(before, now, end), merge(after, now, end)), nil
}

// MergeBusy answers busy times cut to [from, to), overlapping and
// touching ones joined, earliest first: the spans they block (the spans a
// disconnected calendar frees, admin.Service.RemoveStaffCalendar).
func MergeBusy(busy []store.CalendarBusy, from, to time.Time) []Span { return merge(busy, from, to) }

// merge answers busy times cut to [from, to), overlapping and touching
// ones joined, earliest first.
func merge(busy []store.CalendarBusy, from, to time.Time) []Span {
	var spans []Span
	for _, b := range busy {
		sp := Span{Start: b.StartsAt, End: b.EndsAt}
		if sp.Start.Before(from) {
			sp.Start = from
		}
		if sp.End.After(to) {
			sp.End = to
		}
		if sp.End.After(sp.Start) {
			spans = append(spans, sp)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
	var out []Span
	for _, sp := range spans {
		if n := len(out); n > 0 && !sp.Start.After(out[n-1].End) {
			if sp.End.After(out[n-1].End) {
				out[n-1].End = sp.End
			}
			continue
		}
		out = append(out, sp)
	}
	return out
}

// freed answers the parts of the merged spans before not covered by the
// merged spans after.
func freed(before, after []Span) []Span {
	var out []Span
	for _, b := range before {
		start := b.Start
		for _, a := range after {
			if !a.End.After(start) || !a.Start.Before(b.End) {
				continue
			}
			if a.Start.After(start) {
				out = append(out, Span{Start: start, End: a.Start})
			}
			start = a.End
			if !start.Before(b.End) {
				break
			}
		}
		if start.Before(b.End) {
			out = append(out, Span{Start: start, End: b.End})
		}
	}
	return out
}

func (s *Service) window(now time.Time) (time.Time, time.Time) {
	ahead := s.Ahead
	if ahead <= 0 {
		ahead = DefaultAhead
	}
	from := now.Add(-24 * time.Hour).Truncate(time.Hour)
	return from, from.Add(ahead)
}

func (s *Service) skipOwn(uid string) bool {
	return s.Host != "" && strings.HasSuffix(strings.ToLower(uid), "@"+strings.ToLower(s.Host))
}

func (s *Service) password(cal store.StaffCalendar) (string, error) {
	if s.Sealer == nil {
		return "", errors.New("calendar: no sealer for passwords")
	}
	p, err := s.Sealer.Open(cal.PasswordSealed, []byte(cal.StaffID))
	if err != nil {
		return "", &Problem{Message: "The calendar's password cannot be read with this server's secret key (was LINKSLOT_SECRET_KEY changed?). Set the calendar again.", Err: err}
	}
	return string(p), nil
}

// connect opens the password of a CalDAV calendar and dials it; a
// failure is a *Problem.
func (s *Service) connect(cal store.StaffCalendar) (*conn, error) {
	pw, err := s.password(cal)
	if err != nil {
		return nil, err
	}
	c, err := dial(cal.URL, cal.Username, pw, s.Development, s.Dial, s.timeout())
	if err != nil {
		return nil, explain(err, 0)
	}
	return c, nil
}

// expand parses one object's text and expands its busy times.
func (s *Service) expand(href, data string, loc *time.Location, from, to time.Time) ([]store.CalendarBusy, error) {
	c, err := goical.NewDecoder(strings.NewReader(data)).Decode()
	if err != nil {
		return nil, &Problem{Message: fmt.Sprintf("The calendar object %s does not parse as iCalendar (%s). Fix or delete that event in the calendar.", href, scrub(err)), Err: err}
	}
	return s.busyOf(href, c, loc, from, to)
}

func (s *Service) busyOf(href string, c *goical.Calendar, loc *time.Location, from, to time.Time) ([]store.CalendarBusy, error) {
	spans, err := Busy(c, loc, from, to, s.skipOwn)
	if err != nil {
		return nil, &Problem{Message: fmt.Sprintf("An event of the calendar cannot be read (%s, %s). Fix or delete that event in the calendar.", href, scrub(err)), Err: err}
	}
	out := make([]store.CalendarBusy, 0, len(spans))
	for _, sp := range spans {
		// A long event (a week's holiday) is stored a day at a time
		// (store.MaxBusySpan).
		for start := sp.Start; start.Before(sp.End); start = start.Add(store.MaxBusySpan) {
			out = append(out, store.CalendarBusy{Href: href, StartsAt: start, EndsAt: minTime(start.Add(store.MaxBusySpan), sp.End)})
		}
	}
	return out, nil
}

func encode(c *goical.Calendar) (string, error) {
	var b bytes.Buffer
	if err := goical.NewEncoder(&b).Encode(c); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (s *Service) syncCalDAV(ctx context.Context, cal store.StaffCalendar, loc *time.Location, now time.Time) (Result, error) {
	c, err := s.connect(cal)
	if err != nil {
		return Result{}, err
	}
	fail := func(err error) (Result, error) { return Result{}, explain(err, c.http.lastStatus()) }
	from, to := s.window(now)
	stored, err := s.Store.ListCalendarObjects(ctx, cal.StaffID, false)
	if err != nil {
		return Result{}, err
	}
	known := make(map[string]string, len(stored))
	for _, o := range stored {
		known[o.Href] = o.ETag
	}
	// listing is every object of the collection with its ETag: what the
	// server listed, or, after a sync token, what was stored with the
	// changes since the token applied (delta: the hrefs reported changed).
	var (
		listing      map[string]string
		delta        map[string]bool
		token        string // the sync token to store
		isCollection bool
		refused      []string // why sync-collection was not used, for the log
	)
	if cal.SyncToken != "" {
		// What changed since the last good sync (RFC 6578).
		changes, st, err := c.syncCollection(ctx, cal.SyncToken)
		switch {
		case err == nil:
			isCollection = true
			token = changes.SyncToken
			listing = make(map[string]string, len(known)+len(changes.Updated))
			for h, e := range known {
				listing[h] = e
			}
			delta = map[string]bool{}
			for _, o := range changes.Updated {
				if c.member(o.Path) {
					listing[o.Path] = o.ETag
					delta[o.Path] = true
				}
			}
			for _, h := range changes.Deleted {
				if c.member(h) {
					delete(listing, h)
				}
			}
		case refusal(st):
			// An expired or unknown token (403 or 409 with
			// DAV:valid-sync-token), or no sync-collection any more: the
			// whole collection is listed, with a fresh token if offered.
			refused = append(refused, fmt.Sprintf("with the stored token: HTTP %d", st))
		default:
			return fail(err)
		}
	}
	if listing == nil {
		// No token: sync-collection without one lists every object with
		// its ETag, and answers a token for the next sync.
		changes, st, err := c.syncCollection(ctx, "")
		switch {
		case err == nil:
			isCollection = true
			token = changes.SyncToken
			listing = make(map[string]string, len(changes.Updated))
			for _, o := range changes.Updated {
				if c.member(o.Path) {
					listing[o.Path] = o.ETag
				}
			}
		case refusal(st):
			refused = append(refused, fmt.Sprintf("without a token: HTTP %d", st))
		default:
			return fail(err)
		}
	}
	if listing == nil {
		// No sync-collection: one PROPFIND lists the objects with their
		// ETags, and no token is stored.
		files, err := c.dav.ReadDir(ctx, c.collection, false)
		if err != nil {
			return fail(err)
		}
		listing = map[string]string{}
		for _, f := range files {
			if f.IsDir {
				if strings.TrimSuffix(f.Path, "/") == strings.TrimSuffix(c.collection, "/") {
					isCollection = true
				}
				continue
			}
			listing[f.Path] = f.ETag
		}
	}
	if len(refused) > 0 {
		s.log().InfoContext(ctx, "calendar: the server refused sync-collection; listed the whole collection", "staff", cal.StaffID,
			"refused", strings.Join(refused, "; "))
	}
	if isCollection && (cal.SyncedAt == nil || cal.CollectionTag == "") {
		// The first sync checks that the collection is a calendar (an
		// address book or a folder of files is a collection too).
		parent := c.collection[:strings.LastIndex(strings.TrimSuffix(c.collection, "/"), "/")+1]
		cals, err := c.cal.FindCalendars(ctx, parent)
		if err != nil {
			return fail(err)
		}
		isCollection = false
		for _, k := range cals {
			if strings.TrimSuffix(k.Path, "/") == strings.TrimSuffix(c.collection, "/") {
				isCollection = true
			}
		}
	}
	if !isCollection {
		return Result{}, &Problem{Message: "The calendar URL is not a calendar collection. Use the URL of the calendar itself (such as https://HOST/dav/calendars/USER/CALENDAR/), not of a single event or the server's root."}
	}
	tag := listingTag(listing)
	// The window moves a day at a time; then every stored object is
	// expanded again, from its stored text.
	rewindow := cal.SyncedAt == nil || from.Sub(cal.WindowStart) >= 24*time.Hour || cal.WindowStart.IsZero()
	var changed, removed []string
	for href, etag := range listing {
		if delta != nil && !delta[href] {
			continue // not changed since the token
		}
		if old, ok := known[href]; !ok || old != etag || etag == "" {
			changed = append(changed, href)
		}
	}
	for href := range known {
		if _, ok := listing[href]; !ok {
			removed = append(removed, href)
		}
	}
	sort.Strings(changed)
	sort.Strings(removed)
	if !rewindow && (tag == cal.CollectionTag || delta != nil && len(changed) == 0 && len(removed) == 0) {
		// Nothing changed: the sync is recorded, nothing is read.
		err := s.Store.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: cal.StaffID, At: s.now(), CollectionTag: tag,
			SyncToken: token, WindowStart: cal.WindowStart, WindowEnd: cal.WindowEnd})
		return Result{Busy: cal.Busy, Listed: delta == nil}, err
	}
	var objs []caldav.CalendarObject
	if delta == nil && len(changed) > len(listing)/2 {
		// Most of the calendar is new (a first sync): one calendar-query.
		objs, err = c.cal.QueryCalendar(ctx, c.collection, &caldav.CalendarQuery{
			CompRequest: caldav.CalendarCompRequest{Name: "VCALENDAR", AllProps: true, AllComps: true},
			CompFilter:  caldav.CompFilter{Name: "VCALENDAR", Comps: []caldav.CompFilter{{Name: "VEVENT"}}}})
		if err != nil {
			return fail(err)
		}
		want := map[string]bool{}
		for _, h := range changed {
			want[h] = true
		}
		objs = slicesFilter(objs, func(o caldav.CalendarObject) bool { return want[o.Path] })
	} else {
		for i := 0; i < len(changed); i += multigetBatch {
			part, err := c.cal.MultiGetCalendar(ctx, c.collection, &caldav.CalendarMultiGet{Paths: changed[i:min(i+multigetBatch, len(changed))],
				CompRequest: caldav.CalendarCompRequest{Name: "VCALENDAR", AllProps: true, AllComps: true}})
			if err != nil {
				return fail(err)
			}
			objs = append(objs, part...)
		}
	}
	sync := store.CalendarSync{StaffID: cal.StaffID, CollectionTag: tag, SyncToken: token, WindowStart: from, WindowEnd: to, Remove: removed, Replace: rewindow}
	fetched := map[string]bool{}
	for _, o := range objs {
		data, err := encode(o.Data)
		if err != nil {
			return Result{}, &Problem{Message: fmt.Sprintf("The calendar object %s cannot be read (%s). Fix or delete that event in the calendar.", o.Path, scrub(err)), Err: err}
		}
		busy, err := s.busyOf(o.Path, o.Data, loc, from, to)
		if err != nil {
			return Result{}, err
		}
		etag := o.ETag
		if etag == "" {
			etag = listing[o.Path]
		}
		fetched[o.Path] = true
		sync.Upsert = append(sync.Upsert, store.CalendarObject{Href: o.Path, ETag: etag, Data: data})
		sync.Busy = append(sync.Busy, busy...)
	}
	if rewindow {
		// Expand the objects that did not change from their stored text.
		old, err := s.Store.ListCalendarObjects(ctx, cal.StaffID, true)
		if err != nil {
			return Result{}, err
		}
		for _, o := range old {
			if fetched[o.Href] || listing[o.Href] == "" && !hasKey(listing, o.Href) {
				continue
			}
			busy, err := s.expand(o.Href, o.Data, loc, from, to)
			if err != nil {
				return Result{}, err
			}
			sync.Keep = append(sync.Keep, o.Href)
			sync.Busy = append(sync.Busy, busy...)
		}
	}
	sync.At = s.now()
	gone, err := s.apply(ctx, cal, sync, now)
	if err != nil {
		return Result{}, err
	}
	busy := len(sync.Busy)
	if !rewindow {
		// sync.Busy are the changed objects' only: the count of all is
		// what the sync stored with the calendar.
		after, err := s.Store.GetStaffCalendar(ctx, cal.StaffID)
		if err != nil {
			return Result{}, err
		}
		busy = after.Busy
	}
	return Result{Objects: len(objs), Removed: len(removed), Busy: busy, Full: rewindow, Listed: delta == nil, Freed: gone}, nil
}

// syncCollection asks for the collection's objects changed since token
// (every object, with an empty token) and answers the status the server
// answered, for refusal.
func (c *conn) syncCollection(ctx context.Context, token string) (*carddav.SyncResponse, int, error) {
	c.http.resetStatus()
	res, err := c.sync.SyncCollection(ctx, c.collection, &carddav.SyncQuery{SyncToken: token})
	st := c.http.lastStatus()
	if err == nil && res.SyncToken == "" {
		// A multistatus without a token is no sync-collection answer.
		return nil, http.StatusNotImplemented, errors.New("calendar: the sync-collection answer has no sync-token")
	}
	return res, st, err
}

// refusal: the server answered a sync-collection REPORT with a status
// that means it will not answer it (an invalid or expired token, 403 or
// 409; no such REPORT, 400, 405, 415, 501; a 404 is then answered by the
// PROPFIND too, and explained). A 401 is not: the user name or password
// is wrong whatever is asked, and the sync fails at once with that.
func refusal(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusUnauthorized || status == http.StatusNotImplemented
}

// member: href is an object of the collection itself (not the collection,
// nor anything in a collection below it).
func (c *conn) member(href string) bool {
	rest, ok := strings.CutPrefix(href, c.collection)
	return ok && rest != "" && !strings.Contains(rest, "/")
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func slicesFilter[T any](s []T, keep func(T) bool) []T {
	out := s[:0]
	for _, v := range s {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// listingTag stands for a whole listing: it changes when any object is
// added, changed or removed.
func listingTag(listing map[string]string) string {
	hrefs := make([]string, 0, len(listing))
	for h := range listing {
		hrefs = append(hrefs, h)
	}
	sort.Strings(hrefs)
	sum := sha256.New()
	for _, h := range hrefs {
		io.WriteString(sum, h+"\x00"+listing[h]+"\x00")
	}
	return "list:" + hex.EncodeToString(sum.Sum(nil))[:32]
}

// icsHref is the one object an iCalendar URL is stored as.
const icsHref = "feed.ics"

func (s *Service) syncICS(ctx context.Context, cal store.StaffCalendar, loc *time.Location, now time.Time) (Result, error) {
	c, err := dial(cal.URL, "", "", s.Development, s.Dial, s.timeout())
	if err != nil {
		return Result{}, err
	}
	from, to := s.window(now)
	rewindow := cal.SyncedAt == nil || from.Sub(cal.WindowStart) >= 24*time.Hour
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cal.URL, nil)
	if err != nil {
		return Result{}, err
	}
	req.Header.Set("Accept", "text/calendar")
	if cal.CollectionTag != "" && !rewindow {
		req.Header.Set("If-None-Match", cal.CollectionTag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{}, explain(err, 0)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		err := s.Store.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: cal.StaffID, At: s.now(), CollectionTag: cal.CollectionTag,
			WindowStart: cal.WindowStart, WindowEnd: cal.WindowEnd})
		return Result{Busy: cal.Busy, Listed: true}, err
	}
	if resp.StatusCode != http.StatusOK {
		return Result{}, explain(fmt.Errorf("HTTP %d", resp.StatusCode), resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Result{}, explain(err, 0)
	}
	parsed, err := goical.NewDecoder(bytes.NewReader(body)).Decode()
	if err != nil {
		return Result{}, &Problem{Message: fmt.Sprintf("The iCalendar URL does not answer an iCalendar file (%s). Check that it is the calendar's .ics address.", scrub(err)), Err: err}
	}
	busy, err := s.busyOf(icsHref, parsed, loc, from, to)
	if err != nil {
		return Result{}, err
	}
	gone, err := s.apply(ctx, cal, store.CalendarSync{StaffID: cal.StaffID, At: s.now(), CollectionTag: resp.Header.Get("ETag"),
		WindowStart: from, WindowEnd: to, Replace: true, Busy: busy}, now)
	return Result{Objects: 1, Busy: len(busy), Full: true, Listed: true, Freed: gone}, err
}

// Run syncs every connected calendar once per Interval until ctx ends;
// each replica runs it, and the leases share the work.
func (s *Service) Run(ctx context.Context) {
	every := s.Interval
	if every <= 0 {
		every = DefaultInterval
	}
	t := time.NewTicker(every / 10)
	defer t.Stop()
	for {
		s.SyncDue(ctx, every)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SyncDue syncs the calendars whose last sync is older than every.
func (s *Service) SyncDue(ctx context.Context, every time.Duration) {
	cals, err := s.Store.ListStaffCalendars(ctx, "")
	if err != nil {
		if ctx.Err() == nil {
			s.log().WarnContext(ctx, "calendar: list calendars", "err", err)
		}
		return
	}
	now := s.now()
	for _, c := range cals {
		if ctx.Err() != nil {
			return
		}
		if c.AttemptedAt != nil && now.Sub(*c.AttemptedAt) < every {
			continue
		}
		_, _ = s.Sync(ctx, c.StaffID)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
