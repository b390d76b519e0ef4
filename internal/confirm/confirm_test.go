package confirm_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/confirm"
)

func str(s string) *string { return &s }
func yes() *bool           { b := true; return &b }
func no() *bool            { b := false; return &b }

const current = "Book this appointment:\nBusiness: Harbor Dental"

func complete() confirm.Fields {
	return confirm.Fields{
		ConfirmedSummary:     str(current),
		SummaryPresented:     yes(),
		ConfirmationObtained: yes(),
		UserConfirmationText: str("Yes, book it."),
		IdempotencyKey:       str("0b6f5c1e-6d0a-4c41-9d5e-2f7b8f3a9c10"),
	}
}

func TestCheck(t *testing.T) {
	all := []string{"confirmed_summary", "confirmation_summary_presented", "confirmation_obtained", "user_confirmation_text", "idempotency_key"}
	cases := []struct {
		name    string
		edit    func(*confirm.Fields)
		kind    confirm.Kind
		code    string
		missing []string
		field   string
	}{
		{name: "complete", kind: confirm.Execute},
		{name: "preview", edit: func(f *confirm.Fields) { *f = confirm.Fields{} }, kind: confirm.Preview, code: "confirmation_required"},
		{name: "only a key", edit: func(f *confirm.Fields) { *f = confirm.Fields{IdempotencyKey: f.IdempotencyKey} },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: all[:4]},
		{name: "no summary", edit: func(f *confirm.Fields) { f.ConfirmedSummary = nil },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"confirmed_summary"}},
		{name: "blank summary", edit: func(f *confirm.Fields) { f.ConfirmedSummary = str("  \n") },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"confirmed_summary"}},
		{name: "not presented", edit: func(f *confirm.Fields) { f.SummaryPresented = no() },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"confirmation_summary_presented"}},
		{name: "presented absent", edit: func(f *confirm.Fields) { f.SummaryPresented = nil },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"confirmation_summary_presented"}},
		{name: "not obtained", edit: func(f *confirm.Fields) { f.ConfirmationObtained = no() },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"confirmation_obtained"}},
		{name: "no text", edit: func(f *confirm.Fields) { f.UserConfirmationText = nil },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"user_confirmation_text"}},
		{name: "empty text", edit: func(f *confirm.Fields) { f.UserConfirmationText = str("") },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"user_confirmation_text"}},
		{name: "zero-width space only", edit: func(f *confirm.Fields) { f.UserConfirmationText = str("\u200b") },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"user_confirmation_text"}},
		{name: "invisible characters only", edit: func(f *confirm.Fields) { f.UserConfirmationText = str(" \u00ad\u2060\ufeff\u200d ") },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"user_confirmation_text"}},
		{name: "words around a zero-width space", edit: func(f *confirm.Fields) { f.UserConfirmationText = str("\u200bYes, book it") }, kind: confirm.Execute},
		{name: "no key", edit: func(f *confirm.Fields) { f.IdempotencyKey = nil },
			kind: confirm.ConfirmationRequired, code: "missing_idempotency_key", missing: []string{"idempotency_key"}},
		{name: "empty key", edit: func(f *confirm.Fields) { f.IdempotencyKey = str("") },
			kind: confirm.ConfirmationRequired, code: "missing_idempotency_key", missing: []string{"idempotency_key"}},
		{name: "key and text missing", edit: func(f *confirm.Fields) { f.IdempotencyKey = nil; f.UserConfirmationText = nil },
			kind: confirm.ConfirmationRequired, code: "confirmation_required", missing: []string{"user_confirmation_text", "idempotency_key"}},
		{name: "text of 500", edit: func(f *confirm.Fields) { f.UserConfirmationText = str(strings.Repeat("é", 500)) }, kind: confirm.Execute},
		{name: "text of 501", edit: func(f *confirm.Fields) { f.UserConfirmationText = str(strings.Repeat("é", 501)) },
			kind: confirm.InvalidField, code: "invalid_argument", field: "user_confirmation_text"},
		{name: "text not UTF-8", edit: func(f *confirm.Fields) { f.UserConfirmationText = str("yes \xff") },
			kind: confirm.InvalidField, code: "invalid_argument", field: "user_confirmation_text"},
		{name: "key of 15", edit: func(f *confirm.Fields) { f.IdempotencyKey = str(strings.Repeat("k", 15)) },
			kind: confirm.InvalidField, code: "invalid_idempotency_key", field: "idempotency_key"},
		{name: "key of 16", edit: func(f *confirm.Fields) { f.IdempotencyKey = str(strings.Repeat("k", 16)) }, kind: confirm.Execute},
		{name: "key of 200", edit: func(f *confirm.Fields) { f.IdempotencyKey = str(strings.Repeat("k", 200)) }, kind: confirm.Execute},
		{name: "key of 201", edit: func(f *confirm.Fields) { f.IdempotencyKey = str(strings.Repeat("k", 201)) },
			kind: confirm.InvalidField, code: "invalid_idempotency_key", field: "idempotency_key"},
		{name: "key with newline", edit: func(f *confirm.Fields) { f.IdempotencyKey = str("abcdefgh\nijklmnopq") },
			kind: confirm.InvalidField, code: "invalid_idempotency_key", field: "idempotency_key"},
		{name: "key not ASCII", edit: func(f *confirm.Fields) { f.IdempotencyKey = str("clé-de-réessai-0001") },
			kind: confirm.InvalidField, code: "invalid_idempotency_key", field: "idempotency_key"},
		{name: "invalid key beats missing", edit: func(f *confirm.Fields) { f.IdempotencyKey = str("short"); f.ConfirmedSummary = nil },
			kind: confirm.InvalidField, code: "invalid_idempotency_key", field: "idempotency_key"},
		{name: "summary changed", edit: func(f *confirm.Fields) { f.ConfirmedSummary = str(current + " (old price)") },
			kind: confirm.SummaryChanged, code: "summary_changed"},
		{name: "summary prefix", edit: func(f *confirm.Fields) { f.ConfirmedSummary = str(current[:10]) },
			kind: confirm.SummaryChanged, code: "summary_changed"},
		{name: "summary with CRLF and trailing newline", edit: func(f *confirm.Fields) {
			f.ConfirmedSummary = str(strings.ReplaceAll(current, "\n", "\r\n") + "\n")
		}, kind: confirm.Execute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := complete()
			if tc.edit != nil {
				tc.edit(&f)
			}
			r := confirm.Check(f, current)
			if r.Kind != tc.kind || r.Code != tc.code || r.Field != tc.field || !reflect.DeepEqual(r.Missing, tc.missing) {
				t.Fatalf("got %+v", r)
			}
			if r.OK() != (tc.kind == confirm.Execute) {
				t.Error("OK disagrees with Kind")
			}
			if r.Kind != confirm.Execute && r.Kind != confirm.InvalidField && r.Message == "" {
				t.Error("no message")
			}
			if r.Summary != current {
				t.Errorf("summary = %q", r.Summary)
			}
			if f.IdempotencyKey != nil && *f.IdempotencyKey != "" && strings.Contains(r.Message, *f.IdempotencyKey) {
				t.Error("message repeats the key")
			}
		})
	}
}

func TestCheckFieldsSkipsSummary(t *testing.T) {
	f := complete()
	f.ConfirmedSummary = str("anything at all")
	if r := confirm.CheckFields(f); r.Kind != confirm.Execute {
		t.Fatalf("got %+v", r)
	}
}

func TestSameSummary(t *testing.T) {
	if !confirm.SameSummary("a\nb", " a\r\nb\n") {
		t.Error("normalized forms differ")
	}
	if confirm.SameSummary("a\nb", "a\nB") || confirm.SameSummary("", "a") || confirm.SameSummary("a b", "a  b") {
		t.Error("different summaries compare equal")
	}
}
