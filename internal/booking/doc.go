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
// availability answer costs two statements (GetBusiness, ListStaffBookings),
// whatever the number of staff.
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
