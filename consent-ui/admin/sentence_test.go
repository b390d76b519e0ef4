package adminui

import "testing"

func TestAsSentence(t *testing.T) {
	for in, want := range map[string]string{
		"":                            "",
		"email is already registered": "Email is already registered.",
		"wait 2 minutes.":             "Wait 2 minutes.",
		"élan":                        "Élan.",
		"Already? ":                   "Already?",
	} {
		if got := asSentence(in); got != want {
			t.Errorf("asSentence(%q) = %q, want %q", in, got, want)
		}
	}
}
