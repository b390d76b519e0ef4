package rshttp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/testkit"
)

// hungDomain stands for a database that stops answering: every search
// waits until its context ends.
type hungDomain struct{ testkit.NoopDomain }

func (hungDomain) SearchBusinesses(ctx context.Context, q, c string, l, o int) (booking.BusinessPage, error) {
	<-ctx.Done()
	return booking.BusinessPage{}, ctx.Err()
}

// TestRequestDeadlineAnswersRetryable: a tool call whose database work
// never finishes is ended by the request deadline and answered with the
// retryable server_error (retry_after_sec), not left hanging until the
// caller gives up.
func TestRequestDeadlineAnswersRetryable(t *testing.T) {
	e := newEnv(t, envOpts{domain: hungDomain{}, timeout: 1500 * time.Millisecond})
	resp := e.rpc(e.token(nil), toolCall("search_bookable_business", map[string]any{"query": "hair"}), nil)
	body := readBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var rpc struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct {
					Code          string `json:"code"`
					RetryAfterSec int    `json:"retry_after_sec"`
				} `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &rpc); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	te := rpc.Result.StructuredContent.Error
	if !rpc.Result.IsError || te.Code != "server_error" || te.RetryAfterSec <= 0 {
		t.Fatalf("answer %s, want server_error with retry_after_sec", body)
	}
}
