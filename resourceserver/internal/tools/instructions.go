package tools

// What an agent reads before its first call: the server's instructions
// (initialize) say the mutation protocol once, in full (docs/reference.md
// §5); each mutation's description opens with protocolRef, a short
// reference to it, and says only what is its own. docs/tool-descriptions.md
// explains the standard and scores every description.

// serverInstructions is the initialize answer's instructions.
const serverInstructions = `Linkslot books appointments at local businesses for the one person who connected this account, never for anyone else.

Reading changes nothing: search_bookable_business finds a business_reference; check_business_availability with it alone gives the catalog (services, staff, rules), with service_reference and local_date the open times. The person's bookings: search_my_bookings lists them, get_my_booking shows one with its current grant, check_my_booking_availability lists the times one booking can move to. A listed time is not held for anyone.

Changes (create_my_booking, reschedule_my_booking, cancel_my_booking; request_business_callback and join_my_waitlist, which book nothing) take two calls:
1. Call without the confirmation fields. Nothing changes; status is confirmation_required, with confirmed_summary (the text for the person) and proposal (the same facts, structured).
2. Show confirmed_summary word for word and wait for the person's explicit agreement (choosing a time is not agreement). Then call again with the same arguments plus confirmed_summary (unchanged), confirmation_summary_presented: true, confirmation_obtained: true, user_confirmation_text (their words) and idempotency_key (a fresh UUID).
status tells where the change stands. confirmation_required (missing then names any absent or false field), missing_idempotency_key and summary_changed (the details changed: show the new confirmed_summary and ask again) changed nothing; the last two, and confirmation_required with missing, come as a refusal with the same error.code. confirmed, pending (the business must still accept), rescheduled, cancelled, requested (a callback request sent) and waitlisted mean done: the person and the business are notified (notified says how). Any other refusal carries only error.code, with a message saying what to do next; it changed nothing.
The idempotency key: only a change that executed is stored under it, for at least 48 hours, per connection and tool. The same key with the same arguments answers that stored result again with idempotent_replay: true and changes nothing; with other arguments it answers idempotency_conflict. Only the change's own arguments are compared, never the confirmation fields. Previews, refusals and rate_limited store nothing, so the same key may be sent again and executes then.
already_cancelled means one thing everywhere: the booking was cancelled before this call, and the call changed nothing. cancel_my_booking answers it as status cancelled with already_cancelled: true (what the person wanted holds; nobody is notified); the tools that move a booking answer error.code already_cancelled.

Grants and idempotency keys are for you, not the person: never show them. Times are RFC 3339 instants with the business's UTC offset, copied from an availability answer; dates are YYYY-MM-DD in the business's time zone.`

// protocolRef opens every mutation's description (§16's tools too): what
// the two calls are and the fields of the second, pointing to the
// instructions for the rest.
const protocolRef = `Two calls (server instructions): first without the confirmation fields — nothing changes; show the answer's confirmed_summary to the person. Only after they explicitly agree, call again with the same arguments plus confirmed_summary (unchanged), confirmation_summary_presented, confirmation_obtained, user_confirmation_text and a fresh idempotency_key; resend that same call to retry safely.`
