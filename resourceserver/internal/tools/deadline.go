package tools

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerMargin is how long before the request's deadline a tool's own work
// must end, so that its (retryable) error result is written while the
// HTTP request is still alive: the SDK stops waiting for the answer the
// moment the request's context ends.
const answerMargin = time.Second

type deadlineKey struct{}

// WithDeadline records the HTTP request's deadline in ctx as a value. The
// SDK hands tool handlers a context that keeps the request's values but
// not its cancellation (see StreamableHTTPOptions.PropagateRequestCancellation,
// which only covers the newest protocol), so the deadline travels as a value
// and workDeadline turns it back into one.
func WithDeadline(ctx context.Context, dl time.Time) context.Context {
	return context.WithValue(ctx, deadlineKey{}, dl)
}

// workDeadline gives every tools/call a context that ends answerMargin
// before the request's deadline (set by the router from
// LINKSLOT_REQUEST_TIMEOUT and carried by WithDeadline). Database work cut
// short by it surfaces through domainFail as the retryable server_error
// with retry_after_sec.
func workDeadline(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		dl, ok := ctx.Value(deadlineKey{}).(time.Time)
		if !ok {
			dl, ok = ctx.Deadline()
		}
		if ok && method == "tools/call" {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl.Add(-answerMargin))
			defer cancel()
		}
		return next(ctx, method, req)
	}
}
