// Package confirm implements the summarize-then-confirm protocol of Linkslot's
// mutation tools (docs/reference.md §5) and renders the summaries a person confirms.
//
// A mutation tool is called twice. The first call carries no confirmation
// field: it is a preview, changes nothing, and answers confirmation_required
// with the summary the server computed. The person reads it and agrees; the
// agent then repeats the call with the same arguments plus five fields:
// confirmed_summary (the text it showed, unchanged),
// confirmation_summary_presented: true, confirmation_obtained: true,
// user_confirmation_text (the person's words, 1–500 characters) and
// idempotency_key (16–200 printable ASCII characters).
//
// Check decides, in this order:
//
//  1. No confirmation field at all: Preview.
//  2. A field present but malformed: InvalidField, naming it
//     (invalid_argument for user_confirmation_text, invalid_idempotency_key
//     for the key).
//  3. A field absent or empty, or a flag that is false: ConfirmationRequired
//     with Missing listing the exact field names, in the order above; when
//     the key is the only thing missing the code is missing_idempotency_key.
//  4. confirmed_summary differs from the summary the server computes now
//     (compared in constant time, after trimming surrounding white space and
//     normalizing line ends): SummaryChanged, carrying the new summary.
//  5. Otherwise Execute.
//
// The summary is never stored: it is recomputed from the current state, and
// the builders here (CreateSummary, RescheduleSummary, CancelSummary) are
// deterministic — the same facts give byte-identical text and every fact that
// matters (business, service, staff, local time and zone, price, policy, fee,
// notes) appears in it, so a change in any of them changes the text.
//
// internal/mutation, which also uses idempotency keys, looks the key up
// before step 4: a retry of a mutation that already succeeded sees a changed
// booking, and must get the stored answer rather than summary_changed.
// CheckFields runs steps 1–3 alone for that purpose.
package confirm
