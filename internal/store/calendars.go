package store

import (
	"context"
	"time"
)

// Connected calendar kinds (docs/calendars.md).
const (
	CalendarCalDAV = "caldav" // read and written
	CalendarICS    = "ics"    // an iCalendar URL, read only
)

// ChannelCalendar is the outbox channel of writes into CalDAV calendars:
// one message per booking change, whose delivery writes the booking as it
// is then.
const ChannelCalendar = "calendar"

// CalendarBusyID is the ID of the busy times of a connected calendar among
// the bookings that Bookings.ListStaffBookings and StaffDay answer: they
// block slots as a confirmed booking does.
const CalendarBusyID = "calendar-busy"

// MaxBusySpan is the longest busy time stored: longer ones are stored as
// pieces of at most this length, so that reading a day's busy times scans
// the index from a day before it, not from the window's start.
const MaxBusySpan = 24 * time.Hour

// StaffCalendar is a staff member's connected calendar and the state of its
// last sync.
type StaffCalendar struct {
	StaffID        string
	BusinessID     string
	Kind           string // CalendarCalDAV or CalendarICS
	URL            string
	Username       string
	PasswordSealed []byte // AES-GCM under LINKSLOT_SECRET_KEY, bound to StaffID
	// CollectionTag is the collection's tag at the last good sync (its
	// ETag or ctag; an iCalendar URL's ETag): unchanged, nothing is read.
	CollectionTag string
	// SyncToken is the RFC 6578 sync token the CalDAV server answered at
	// the last good sync: the next sync asks only for what changed since
	// (empty: none, the collection is listed whole). Setting the calendar
	// again clears it.
	SyncToken string
	// WindowStart and WindowEnd are the span busy times were expanded
	// over; busy times outside it are not stored.
	WindowStart, WindowEnd time.Time
	SyncedAt               *time.Time // the last good sync
	AttemptedAt            *time.Time // the last sync, good or not
	LastError              string     // what went wrong and what to fix; empty after a good sync
	Objects, Busy          int        // objects read and busy times stored
	CreatedAt, UpdatedAt   time.Time
}

// CalendarObject is one calendar object as last read: its address in the
// collection, its ETag and its iCalendar text.
type CalendarObject struct {
	Href string
	ETag string
	Data string
}

// CalendarBusy is one busy time of a calendar object.
type CalendarBusy struct {
	Href             string
	StartsAt, EndsAt time.Time
}

// CalendarSync is what one good sync writes, in one transaction.
type CalendarSync struct {
	StaffID       string
	At            time.Time
	CollectionTag string
	SyncToken     string // the sync token to store (empty: none)
	WindowStart   time.Time
	WindowEnd     time.Time
	// Replace drops every stored object and busy time first (a first sync,
	// an iCalendar file read whole, or a window that moved); otherwise
	// only the objects of Upsert and Remove are replaced.
	Replace bool
	Upsert  []CalendarObject
	Remove  []string       // hrefs gone from the calendar
	Busy    []CalendarBusy // the busy times of Upsert (every object's when Replace)
	// Keep lists the objects left as they are when Replace is set: their
	// busy times are in Busy, their text is not written again.
	Keep []string
}

// CalendarEvent is the event Linkslot keeps in a staff member's CalDAV
// calendar for one booking.
type CalendarEvent struct {
	BookingID string
	StaffID   string
	Href      string
	ETag      string
	Version   int  // the booking version it shows
	Removed   bool // deleted from the calendar (the booking was cancelled)
	UpdatedAt time.Time
}

// DefaultReminders are the reminder offsets of a business that set none:
// 24 hours and 2 hours before the start.
var DefaultReminders = []time.Duration{24 * time.Hour, 2 * time.Hour}

// Calendars stores connected calendars, what their syncs read, the events
// written into them, and each business's reminders.
type Calendars interface {
	// Leases: one process syncs a calendar at a time.
	Leases
	// PutStaffCalendar connects (or replaces) a staff member's calendar;
	// what an earlier calendar's syncs stored is dropped.
	PutStaffCalendar(ctx context.Context, c StaffCalendar) error
	GetStaffCalendar(ctx context.Context, staffID string) (StaffCalendar, error)
	// ListStaffCalendars lists the calendars of a business (every one when
	// businessID is empty), by staff id.
	ListStaffCalendars(ctx context.Context, businessID string) ([]StaffCalendar, error)
	DeleteStaffCalendar(ctx context.Context, staffID string) error
	// ListCalendarObjects returns the stored objects of a calendar (their
	// text only when withData), by href.
	ListCalendarObjects(ctx context.Context, staffID string, withData bool) ([]CalendarObject, error)
	// ListCalendarBusy returns the busy times a calendar's syncs stored
	// that intersect [from, to), earliest first.
	ListCalendarBusy(ctx context.Context, staffID string, from, to time.Time) ([]CalendarBusy, error)
	// ApplyCalendarSync writes a good sync and clears the last error.
	ApplyCalendarSync(ctx context.Context, s CalendarSync) error
	// RecordCalendarError stores a failed sync's message, leaving the busy
	// times of the last good sync as they are.
	RecordCalendarError(ctx context.Context, staffID string, at time.Time, msg string) error
	GetCalendarEvent(ctx context.Context, bookingID string) (CalendarEvent, error)
	PutCalendarEvent(ctx context.Context, e CalendarEvent) error
	// ReminderOffsets returns a business's reminder offsets
	// (DefaultReminders when it set none; empty: off).
	ReminderOffsets(ctx context.Context, businessID string) ([]time.Duration, error)
	SetReminderOffsets(ctx context.Context, businessID string, offsets []time.Duration, now time.Time) error
}
