package confirm

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// Field names, exactly as the tools' input schemas spell them.
const (
	FieldConfirmedSummary     = "confirmed_summary"
	FieldSummaryPresented     = "confirmation_summary_presented"
	FieldConfirmationObtained = "confirmation_obtained"
	FieldUserConfirmationText = "user_confirmation_text"
	FieldIdempotencyKey       = "idempotency_key"
)

// FieldNames are the five confirmation fields, in the order Missing lists
// them.
var FieldNames = []string{FieldConfirmedSummary, FieldSummaryPresented, FieldConfirmationObtained,
	FieldUserConfirmationText, FieldIdempotencyKey}

// Limits of the free-text fields.
const (
	MaxConfirmationText = 500 // characters (Unicode code points)
	MinKeyLen           = 16
	MaxKeyLen           = 200
)

// Fields are the confirmation arguments of a mutation call; nil means absent.
type Fields struct {
	ConfirmedSummary     *string
	SummaryPresented     *bool
	ConfirmationObtained *bool
	UserConfirmationText *string
	IdempotencyKey       *string
}

// Kind is what the tool must do with the call.
type Kind int

// Kinds of Result.
const (
	// Preview: no confirmation field was sent. Change nothing; answer
	// confirmation_required with the current summary.
	Preview Kind = iota + 1
	// ConfirmationRequired: some fields are missing (Result.Missing).
	// Change nothing; answer Result.Code with the current summary.
	ConfirmationRequired
	// InvalidField: Result.Field is malformed. Change nothing.
	InvalidField
	// SummaryChanged: the confirmed summary is not the current one.
	// Change nothing; answer summary_changed with Result.Summary.
	SummaryChanged
	// Execute: confirmed; perform the mutation.
	Execute
)

// Result is Check's decision.
type Result struct {
	Kind Kind
	// Code is the tool-result code: confirmation_required,
	// missing_idempotency_key, invalid_argument, invalid_idempotency_key,
	// summary_changed; empty for Execute.
	Code string
	// Missing lists the missing fields (ConfirmationRequired).
	Missing []string
	// Field names the malformed field (InvalidField).
	Field string
	// Message tells the agent what to do next. It never repeats the values
	// sent.
	Message string
	// Summary is the current summary (Preview, ConfirmationRequired,
	// SummaryChanged; also Execute).
	Summary string
}

// OK reports whether the call may execute.
func (r Result) OK() bool { return r.Kind == Execute }

// Err is an InvalidField result as the domain error (code, field,
// message); nil for every other kind.
func (r Result) Err() error {
	if r.Kind != InvalidField {
		return nil
	}
	return &problem.Error{Code: r.Code, Field: r.Field, Message: r.Message}
}

// Messages, fixed so that agents and tests can rely on them.
const (
	msgPreview = "Nothing has changed yet. Show confirmed_summary to the person, word for word, and ask for explicit agreement. " +
		"If they agree, call this tool again with the same arguments plus confirmed_summary (unchanged), " +
		"confirmation_summary_presented: true, confirmation_obtained: true, user_confirmation_text (what the person said) " +
		"and a new idempotency_key of 16–200 characters."
	msgMissing = "Nothing has changed. The call lacks the confirmation fields listed in missing; show confirmed_summary " +
		"to the person, obtain explicit agreement, and call again with every field in missing."
	msgMissingKey = "Nothing has changed. Add an idempotency_key of 16–200 printable ASCII characters (for example a random UUID); " +
		"reuse the same key only when retrying this same request."
	msgChanged = "Nothing has changed. The details changed since the summary was made (time, staff, price or policy): " +
		"show the new confirmed_summary to the person, obtain their agreement again, and call again with it."
	msgText = "user_confirmation_text must be what the person said to agree, 1–500 characters of valid text."
	msgKey  = "idempotency_key must be 16–200 printable ASCII characters (letters, digits, punctuation or spaces; no control or non-ASCII characters); " +
		"a random UUID works."
)

// CheckFields runs the checks that do not need the current summary: preview,
// malformed fields, missing fields. It answers Execute when all five fields
// are present and well formed; the caller must still compare the summary
// (Check) before changing anything.
func CheckFields(f Fields) Result {
	if f.ConfirmedSummary == nil && f.SummaryPresented == nil && f.ConfirmationObtained == nil &&
		f.UserConfirmationText == nil && f.IdempotencyKey == nil {
		return Result{Kind: Preview, Code: problem.CodeConfirmationRequired, Message: msgPreview}
	}
	if t := f.UserConfirmationText; t != nil && textcheck.Visible(*t) {
		if !utf8.ValidString(*t) || utf8.RuneCountInString(*t) > MaxConfirmationText {
			return Result{Kind: InvalidField, Code: problem.CodeInvalidArgument, Field: FieldUserConfirmationText, Message: msgText}
		}
	}
	if k := f.IdempotencyKey; k != nil && *k != "" && !ValidKey(*k) {
		return Result{Kind: InvalidField, Code: problem.CodeInvalidIdempotencyKey, Field: FieldIdempotencyKey, Message: msgKey}
	}
	var missing []string
	if f.ConfirmedSummary == nil || strings.TrimSpace(*f.ConfirmedSummary) == "" {
		missing = append(missing, FieldConfirmedSummary)
	}
	if f.SummaryPresented == nil || !*f.SummaryPresented {
		missing = append(missing, FieldSummaryPresented)
	}
	if f.ConfirmationObtained == nil || !*f.ConfirmationObtained {
		missing = append(missing, FieldConfirmationObtained)
	}
	// Words the person said show: a text of only spaces, zero-width or
	// other invisible characters is missing (docs/reference.md §5).
	if f.UserConfirmationText == nil || !textcheck.Visible(*f.UserConfirmationText) {
		missing = append(missing, FieldUserConfirmationText)
	}
	if f.IdempotencyKey == nil || *f.IdempotencyKey == "" {
		missing = append(missing, FieldIdempotencyKey)
	}
	switch {
	case len(missing) == 1 && missing[0] == FieldIdempotencyKey:
		return Result{Kind: ConfirmationRequired, Code: problem.CodeMissingIdempotencyKey, Missing: missing, Message: msgMissingKey}
	case len(missing) > 0:
		return Result{Kind: ConfirmationRequired, Code: problem.CodeConfirmationRequired, Missing: missing, Message: msgMissing}
	}
	return Result{Kind: Execute}
}

// Check decides what a mutation call may do, given the summary the server
// computes now from the current state (current).
func Check(f Fields, current string) Result {
	r := CheckFields(f)
	r.Summary = current
	if r.Kind != Execute {
		return r
	}
	if !SameSummary(*f.ConfirmedSummary, current) {
		return Result{Kind: SummaryChanged, Code: problem.CodeSummaryChanged, Message: msgChanged, Summary: current}
	}
	return r
}

// SameSummary compares a confirmed summary with the current one in constant
// time (both are hashed first, so not even the length leaks), after trimming
// surrounding white space and turning CRLF into LF on both sides.
func SameSummary(confirmed, current string) bool {
	a := sha256.Sum256([]byte(normalize(confirmed)))
	b := sha256.Sum256([]byte(normalize(current)))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func normalize(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// ValidKey reports whether k is a well-formed idempotency key: 16–200
// printable ASCII characters (0x20–0x7E, space included). It is the one
// rule for keys: internal/idempotency refuses any other.
func ValidKey(k string) bool {
	if len(k) < MinKeyLen || len(k) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}
