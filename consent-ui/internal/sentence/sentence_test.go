package sentence

import "testing"

func TestOf(t *testing.T) {
	for in, want := range map[string]string{
		"":                            "",
		"email is already registered": "Email is already registered.",
		"wait 2 minutes.":             "Wait 2 minutes.",
		"élan":                        "Élan.",
		"Already? ":                   "Already?",
	} {
		if got := Of(in); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
}
