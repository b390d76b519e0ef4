// Package mutation is Linkslot's mutation protocol (docs/reference.md §5) as one
// domain service: Create, Reschedule and Cancel take who is asking (Caller),
// what they ask (a request of plain values) and how they agreed
// (Confirmation), and make every decision the protocol needs, in one place.
// Front ends only decode their input and render the Outcome: the MCP tools
// (resourceserver/internal/tools) for agents, the "My bookings" pages for
// people on the web.
//
// # The steps, in order
//
//  1. Arguments: free text (notes, reason) within its limit
//     (booking.CheckText).
//  2. Confirmation fields without the summary (confirm.CheckFields): a
//     malformed user_confirmation_text or idempotency_key fails at once.
//  3. When all five confirmation fields are present, the idempotency key is
//     looked up (idempotency.Keeper.Lookup) before anything else: a used key
//     answers its stored Outcome (Replay) or idempotency_conflict. A retry of
//     a successful move carries the grant and the summary that move
//     superseded, and must still get the first answer.
//  4. Reschedule and cancel by an agent: the booking grant is verified
//     against the booking as it is now (invalid_grant, expired_grant),
//     before any business rule.
//  5. The booking engine plans the change (business rules, nothing written)
//     and internal/confirm renders the summary from the plan's facts.
//  6. confirm.Check compares the summary: a preview (no confirmation field),
//     missing fields or a changed summary answer an Outcome without writing.
//  7. Execute under idempotency.Keeper.Run, in one transaction: the booking
//     write, the booking's new grant, the Notifier's messages, the Activity
//     entry and the idempotency record commit together, or nothing does.
//
// A failure after step 3 of a confirmed call looks the key up once more: a
// duplicate whose first lookup missed may fail only because the original
// committed meanwhile (its slot is now the original's booking, its grant is
// superseded), and gets the original's answer instead.
//
// Business failures are *problem.Error values (code, field, message written
// for the agent or person); anything else is an internal failure the front
// end logs and answers as server_error.
//
// # Callers: agents and people on the web
//
// Caller names the account the change is for and the channel it comes
// through. An agent (ChannelAgent) acts through a link: LinkID and ClientID
// are set, idempotency keys are scoped to the link, reschedule and cancel
// need the booking's grant, and every answer carries the booking's new
// grant bound to that link. A person on the web (ChannelWeb, the "My
// bookings" page of docs/reference.md §12) acts for their own account through a
// signed-in session: there is no link and no grant (the engine only ever
// finds the caller's own bookings), idempotency keys are scoped to the
// account ("account:" + id; the page puts a fresh key in its confirm form,
// so a double submit replays), and answers carry no grant. The Activity
// entry records the channel in Activity.Via ("agent" or "web").
//
// # Notifications in the same transaction
//
// Service.Notifier, when set, is called inside the mutation's transaction,
// after the booking write, with the executed Change: its kind (created,
// rescheduled, cancelled), the booking before (nil for a create) and after,
// the business, the person's account, the caller and the summary. It writes
// its outbox messages through the transaction it is given (NotifyTx), so
// they commit with the booking or not at all (docs/reference.md §11), and returns
// what it queued (Notified), which the Outcome carries and the stored
// idempotent answer keeps, so a replay reports the same. An error from
// Notify aborts the transaction: nothing changes. A nil Notifier sends
// nothing and Outcome.Notified stays nil.
//
// Notify may run more than once for one mutation: when the database aborts
// the transaction as a deadlock victim or serialization failure, Keeper.Run
// runs the whole transaction again. It must therefore change nothing outside
// the transaction it is given.
//
// # What is stored
//
// The idempotent answer and the Activity entry's outcome are the Outcome's
// stored form: status, confirmed_summary, booking (as get_my_booking shows
// it, with its grant — the Activity entry drops the grant), already_cancelled
// and notified. A replay decodes it into the same Outcome with Replay set,
// so a front end renders a replay exactly as it rendered the first answer.
package mutation
