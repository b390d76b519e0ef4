// Package calendar connects a staff member's own calendar to Linkslot
// (docs/calendars.md): a CalDAV calendar, read and written, or an
// iCalendar URL, read only.
//
// Reading. A sync reads the calendar and stores its busy times
// (store.Calendars.ApplyCalendarSync); availability reads only what the
// last good sync stored, never the calendar. A CalDAV sync asks the server
// what changed since the sync token it stored last (RFC 6578's
// sync-collection REPORT) and fetches only the objects added or changed
// (calendar-multiget); without a token (the first sync) the same REPORT
// lists every object with its ETag and answers a token, and the whole
// collection is read in one calendar-query. A server that refuses the
// REPORT, or a token it no longer knows, is listed with one PROPFIND of
// the ETags instead (a fresh token is asked for when the server offers
// one). The iCalendar URL is read whole, with its ETag. Events are
// expanded over a window (a day back, a year ahead) in their own zones:
// recurrences with EXDATE and overridden instances, all-day events from
// midnight to midnight in the business's zone; transparent and cancelled
// events, and Linkslot's own bookings (their UIDs end with the issuer's
// host), are not busy. One process syncs a calendar at a time (a lease
// shared by replicas). A failed sync stores what went wrong and what to
// fix, and leaves the last good busy times as they were. A sync that
// removes busy times hands each span it freed to Service.Freed after it
// commits (the waitlist's offers; docs/calendars.md "Freed time").
//
// Writing. Every booking change queues an outbox message of channel
// store.ChannelCalendar in the booking's transaction. Its delivery reads the
// booking as it is then and puts it into the staff member's CalDAV calendar
// (UID REFERENCE@ISSUER-HOST, the object REFERENCE.ics), or deletes it once
// cancelled: the first PUT with If-None-Match: *, later ones with
// If-Match: the ETag stored in calendar_events, so that a retried or late
// message never writes an event twice. The DELETE of a cancelled
// booking's event sends If-Match the stored ETag too: an event the
// calendar's owner changed since (412) is left there and logged, one gone
// already (404) is done. A calendar that is down only delays the write:
// the outbox retries it with backoff, and the booking was made.
//
// The CalDAV protocol is github.com/emersion/go-webdav's caldav client
// (v0.6.0), and its carddav client for the one sync-collection REPORT:
// go-webdav offers that REPORT only there, it is plain WebDAV (RFC 6578),
// and the CardDAV address-data property it asks for besides getetag is
// answered "not found" by a calendar server and ignored. The iCalendar
// parsing is github.com/emersion/go-ical's (with
// github.com/teambition/rrule-go for recurrences); the objects written are
// internal/ical's (golang-ical), as in invitations. Every request goes
// through internal/safefetch's dialer: public addresses only, loopback too
// in development; no redirects; 30 s and 32 MiB per exchange.
package calendar
