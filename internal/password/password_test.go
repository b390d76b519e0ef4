package password_test

import (
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/password"
)

func TestHashVerify(t *testing.T) {
	h, err := password.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$") || strings.Contains(h, "correct horse") {
		t.Fatalf("unexpected hash %q", h)
	}
	h2, _ := password.Hash("correct horse")
	if h == h2 {
		t.Fatal("not salted")
	}
	tests := []struct {
		name, hash, pw string
		want           bool
	}{
		{"match", h, "correct horse", true},
		{"wrong", h, "correct horsE", false},
		{"empty", h, "", false},
		{"bcrypt-looking", "$2a$10$abcdefghijklmnopqrstuu", "correct horse", false},
		{"garbage", "$argon2id$v=19$m=x$$", "correct horse", false},
		{"empty hash", "", "", false},
	}
	for _, tt := range tests {
		if got := password.Verify(tt.hash, tt.pw); got != tt.want {
			t.Errorf("%s: got %v", tt.name, got)
		}
	}
	if _, err := password.Hash(strings.Repeat("x", password.MaxLength+1)); err == nil {
		t.Fatal("over-long password accepted")
	}
}
