// Package booking is Linkslot's booking engine: catalog answers, the slot
// engine, and the create / reschedule / cancel mutations. It knows no HTTP,
// MCP or SQL; it works on the internal/store interfaces.
//
// # Slots
//
// One engine lists availability and validates every create and reschedule.
// For a service, a staff member and a local date, the open times are the
// business's opening hours intersected with the staff member's weekly hours
// (both may be split into several windows), minus the staff member's time off
// and minus the buffer-padded spans of their confirmed bookings, on a grid
// aligned to the start of each working window with the business's slot
// interval, at least the minimum notice after now and before now + the
// booking horizon. A slot [s, s+duration) must lie inside one working window
// and outside time off; its blocked span [s-buffer_before, s+duration+
// buffer_after) must not meet another confirmed booking's blocked span.
//
// The horizon is measured from now in whole days of 24 hours (HorizonDays,
// 60 when unset); the slot interval is 15 minutes when unset. A requested
// start is refused, in this order, as in_the_past, too_soon (inside the
// minimum notice), beyond_booking_horizon, and otherwise slot_taken when the
// engine does not list exactly that instant for that staff member (taken,
// closed, time off, or off the grid).
//
// # Policies
//
// Only agent-enabled appointment businesses are bookable (otherwise
// business_not_bookable, with the business's own booking_url when it has
// one); a service that requires a deposit answers deposit_required with that
// URL and books nothing. Cancelling later than the business's cancellation
// window before the start costs its fee, computed when planning and stored
// on the booking. A booking that has started (or is completed) can no longer
// be cancelled (cancellation_closed) or moved (in_the_past); one with an
// active payment or deposit hold answers payment_active. Cancelling a
// cancelled booking is reported (CancelPlan.AlreadyCancelled), not failed.
// Another person's booking answers booking_not_found, like a missing one.
// References are "LS-" and ten characters of an unambiguous alphabet (50
// random bits), matched case-insensitively.
//
// # Local time
//
// Weekly hours are local wall-clock minutes. Each local time is resolved to
// an instant once, in Go, with one rule: a local time that a DST change skips
// does not exist (no slot starts there; a window bound that falls in a gap
// becomes the instant the gap ends), and a local time that a DST change
// repeats means its first occurrence. Durations are elapsed time. Days are
// iterated by calendar date, never by adding 24 hours. Everything is stored
// and compared as UTC instants; answers carry instants in the business's zone
// so they print as RFC 3339 with its offset.
//
// # Statements
//
// Loaded catalogs are cached in-process by business id and revalidated by the
// business row's UpdatedAt, which every catalog change bumps. A warm
// availability answer costs one statement, whatever the number of staff:
// store.StaffDay reads the business row's UpdatedAt beside the bookings the
// cached catalog says to read, and the answer is used only when that
// version is the cached one. Connected calendars' busy times are kept the
// same way, by the business's calendar tag that StaffDay reads beside the
// version (busyCache; a second statement, store.CalendarBusyDay, the first
// time a day is asked under a new tag, which reads only the calendars whose
// own busy tag changed). Otherwise (a changed catalog, a business gone,
// a question the cached catalog cannot answer) the answer is made as on a
// cold cache: GetBusiness, the catalog when it changed, ListStaffBookings.
//
// # Mutations
//
// Each mutation is split into a plan (validate, compute every fact a human
// confirmation summary needs, write nothing) and an execution that runs
// through a store the caller passes, so the caller can put its idempotency
// record and activity entry in the same transaction (store.InTx). The
// execution re-checks the slot; the store's no-overlap guarantee (PostgreSQL
// exclusion constraint, SQLite serialized check) turns a lost race into
// slot_taken. Reschedule and cancel re-check the booking version.
package booking
