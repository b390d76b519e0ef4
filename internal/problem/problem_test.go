package problem_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/linkslot/linkslot/internal/problem"
)

var errBase = errors.New("base")

func TestError(t *testing.T) {
	sentinel := problem.New("invalid_grant", "use the current grant")
	refined := sentinel.WithField("grant").Wrap(errBase)
	wrapped := fmt.Errorf("context: %w", refined)
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"same code", errors.Is(wrapped, sentinel)},
		{"wrapped base", errors.Is(wrapped, errBase)},
		{"other code", !errors.Is(wrapped, problem.New("expired_grant", "x"))},
		{"sentinel unchanged", sentinel.Field == "" && refined.Field == "grant"},
		{"text", refined.Error() == "invalid_grant: use the current grant"},
		{"code of", problem.CodeOf(wrapped) == "invalid_grant" && problem.CodeOf(errBase) == "" && problem.CodeOf(nil) == ""},
		{"message", sentinel.WithMessage("n=%d", 2).Message == "n=2" && sentinel.Message == "use the current grant"},
		{"newf", problem.Newf("too_soon", "in %d min", 5).Error() == "too_soon: in 5 min"},
	} {
		if !tc.ok {
			t.Errorf("%s", tc.name)
		}
	}
	if e, ok := problem.As(wrapped); !ok || e.Field != "grant" {
		t.Errorf("As: %v %v", e, ok)
	}
}
