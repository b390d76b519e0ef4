package tools

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/linkslot/linkslot/internal/metrics"
)

// outcomeOf is the part of every tool answer the metrics read: the success
// status of a mutation, the error code of a failure, and the replay flag.
type outcomeOf struct {
	Status           string `json:"status"`
	IdempotentReplay bool   `json:"idempotent_replay"`
	AlreadyCancelled bool   `json:"already_cancelled"`
	Error            *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// instrument counts every tools/call by tool and outcome ("ok", a mutation's
// status such as confirmation_required, or the error code), executed
// mutations, idempotent replays and refused grants — in one place, from the
// answers themselves, so no tool has to remember to count.
func instrument(m *metrics.Metrics) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			call, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil {
				return res, err
			}
			tool := call.Params.Name
			r, _ := res.(*mcp.CallToolResult)
			if err != nil || r == nil {
				m.ObserveTool(tool, "protocol_error")
				return res, err
			}
			var o outcomeOf
			if raw, ok := r.StructuredContent.(json.RawMessage); ok {
				// segmentio skips the fields outcomeOf does not name
				// without decoding them: a day of open times costs a scan.
				_ = fastjson.Unmarshal(raw, &o)
			}
			outcome := "ok"
			switch {
			case o.Error != nil && o.Error.Code != "":
				outcome = o.Error.Code
				if outcome == "invalid_grant" || outcome == "expired_grant" {
					m.ObserveGrantRefused(outcome)
				}
			case r.IsError:
				outcome = "error"
			case o.Status == StatusConfirmationRequired:
				outcome = o.Status
			}
			m.ObserveTool(tool, outcome)
			if outcome != "ok" {
				return res, err
			}
			if o.IdempotentReplay {
				m.ObserveReplay(tool)
				return res, err
			}
			switch {
			case o.Status == StatusConfirmed:
				m.ObserveBooking("created")
			case o.Status == StatusRescheduled:
				m.ObserveBooking("rescheduled")
			case o.Status == StatusCancelled && !o.AlreadyCancelled:
				m.ObserveBooking("cancelled")
			}
			return res, err
		}
	}
}
