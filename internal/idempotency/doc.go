// Package idempotency makes Linkslot's mutation tools safe to retry
// (docs/reference.md §5): a request carries an idempotency_key, and the first
// request with a key executes while every later one with the same key and the
// same arguments gets the first one's answer back, unchanged, without
// executing again.
//
// Records are keyed by (link, tool, key): keys never collide across people,
// agents or tools. Each record holds a hash of the request's arguments
// (ArgsHash) and the answer. A key reused with different arguments answers
// ErrConflict (idempotency_conflict) and executes nothing.
//
// # One transaction
//
// Keeper.Run claims the key, runs the mutation and stores its answer in one
// store.InTx transaction, and the mutation's own writes (the booking, the
// booking event, the Activity entry the caller adds) go through the same
// transaction, which the mutation sees as the interface it declares (the
// Keeper's type parameter, mutation.Tx, which embeds Tx). So the booking write and the idempotency record
// commit together or not at all: a crash, a fault or a business failure
// between them leaves neither behind.
//
// Concurrent duplicates never execute twice. On SQLite every transaction
// begins IMMEDIATE and holds the database write lock, so the second request
// starts after the first has committed and finds its record. On PostgreSQL
// the second request's claim (INSERT … ON CONFLICT DO NOTHING on the primary
// key) waits for the first transaction; when the first commits, the insert
// does nothing and the second reads the committed record and replays it; if
// the first rolled back, the second claims the key and executes. A pending
// record is therefore never visible to anyone else; should one ever be found
// (a record written outside this package), Run answers ErrInProgress
// (rate_limited, retry after RetryAfterSec).
//
// A transaction PostgreSQL aborts as a deadlock victim or serialization
// failure (40P01, 40001 — concurrent confirmations of overlapping slots can
// make two exclusion-constraint checks wait on each other; sqlstore reports
// it as store.ErrRetry) committed nothing; Run runs it again, a few times at most, so such a race ends in
// success or slot_taken rather than a server error. exec must therefore
// change nothing outside its transaction.
//
// # Failures leave no record
//
// A mutation that fails (slot_taken, too_soon, invalid_grant,
// summary_changed, a database error…) rolls the whole transaction back,
// including the claim. Nothing is remembered, so the same key may be retried
// and will execute then. This follows the semantics users rely on ("reusing
// idempotency_key makes retries safe"; "failure leaves the original booking
// unchanged"): a failure changed nothing, so there is nothing a retry could
// duplicate, and remembering a transient failure (a slot that was taken and
// is free again, a database timeout) would only make a correct retry fail.
// Only successful answers are stored and replayed.
//
// # What the hash covers
//
// ArgsHash covers every argument that decides what happens — booking,
// business, service, staff, time, notes, reason, grant — as canonical JSON
// (object keys sorted, numbers as written, null and absent alike). It
// excludes the five confirmation fields (confirmed_summary,
// confirmation_summary_presented, confirmation_obtained,
// user_confirmation_text, idempotency_key): they record how the person
// agreed, not what is done, and a retrying agent may word them differently
// (or carry a summary recomputed after the first attempt succeeded).
//
// # Retention
//
// Records are kept for the Keeper's TTL, at least 24 hours (MinTTL); Purge
// deletes expired ones. A record past its expiry but not yet purged still
// replays: docs/reference.md §5 promises "at least", never "at most".
//
// # Order of checks
//
// internal/mutation drives the Keeper. It looks the key up (Keeper.Lookup)
// before checking the grant and the summary:
// a retry of a successful reschedule carries a grant the reschedule
// superseded and a summary of the old time, and must still get the stored
// answer. Run repeats the lookup atomically, so a duplicate racing past
// Lookup is still caught.
package idempotency
