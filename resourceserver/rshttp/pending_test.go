package rshttp_test

// A service that requires the business's confirmation, through the real MCP
// tools on both backends (docs/reference.md "Bookings the business
// answers"): create_my_booking answers pending with respond_by, the slot is
// held against another create and in availability, get_my_booking and
// search_my_bookings status=pending show it, and the catalog answer carries
// requires_confirmation and a business's self-reported credentials.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
)

// read calls a read tool and decodes its structured answer.
func (ag agent) read(name string, args map[string]any) map[string]any {
	ag.t.Helper()
	res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		ag.t.Fatalf("%s: %v", name, err)
	}
	checkAnswer(ag.t, ag.cs, name, res)
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || res.IsError {
		ag.t.Fatalf("%s: %s (%v)", name, b, err)
	}
	return m
}

func TestPendingThroughTheTools(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, envOpts{noLimits: true, store: s})
		ann := e.agentFor(e.account, e.link, "")

		// The epoch is Monday 2 March 2026, 20:00 in Sydney; Harbour
		// Massage answers within 12 hours.
		args := map[string]any{"business_reference": "biz-harbour-massage", "service_reference": "svc-pregnancy-massage",
			"staff_reference": "stf-chloe-nguyen", "starts_at": "2026-03-04T10:00:00+11:00"}
		pre := ann.call(tools.CreateMyBooking, args)
		if pre.isError || !strings.HasPrefix(pre.ConfirmedSummary, "Request this appointment (the business must confirm it):") ||
			!strings.Contains(pre.ConfirmedSummary, "Harbour Massage & Wellness confirms or declines this request within 12 hours") {
			t.Fatalf("preview: %s", pre.raw)
		}
		a := ann.call(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, "pending-through-tools-1"))
		if a.isError || a.Status != "pending" || a.Booking == nil || a.Booking.Status != "pending" || a.Booking.RespondBy == nil ||
			a.Booking.RespondBy.Format("2006-01-02T15:04:05Z07:00") != "2026-03-03T08:00:00+11:00" || a.grant() == "" ||
			!strings.Contains(a.Message, "the business must confirm it") || a.Notified == nil {
			t.Fatalf("pending create: %s", a.raw)
		}
		ref := a.Booking.Reference
		if b := e.bookingByRef(ref); b.Status != "pending" || b.RespondBy == nil {
			t.Fatalf("stored: %+v", b)
		}
		// A replay answers the same pending booking.
		if r := ann.call(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, "pending-through-tools-1")); !r.IdempotentReplay ||
			r.Status != "pending" || r.Booking.Reference != ref {
			t.Fatalf("replay: %s", r.raw)
		}

		// The slot is held.
		over := map[string]any{"business_reference": "biz-harbour-massage", "service_reference": "svc-remedial-60",
			"staff_reference": "stf-chloe-nguyen", "starts_at": "2026-03-04T10:30:00+11:00"}
		if o := ann.call(tools.CreateMyBooking, over); !o.isError || o.code() != "slot_taken" {
			t.Fatalf("overlapping create: %s", o.raw)
		}
		av := ann.read(tools.CheckBusinessAvailability, map[string]any{"business_reference": "biz-harbour-massage",
			"service_reference": "svc-remedial-60", "local_date": "2026-03-04", "with_staff_reference": "stf-chloe-nguyen"})
		// Chloe works 09:00–15:00: a 60-minute massage with 15 minutes after
		// fits nowhere before the pending booking ends (11:15), so the first
		// time offered is 11:30.
		if raw, _ := json.Marshal(av); !strings.Contains(string(raw), `"slots":[{"ends_at":"2026-03-04T12:30:00+11:00","starts_at":"2026-03-04T11:30:00+11:00"}`) {
			t.Fatalf("availability around the pending booking: %s", raw)
		}

		// Reads show the state.
		got := ann.read(tools.GetMyBooking, map[string]any{"booking_reference": ref})
		bk, _ := got["booking"].(map[string]any)
		if bk["status"] != "pending" || bk["respond_by"] != "2026-03-03T08:00:00+11:00" || bk["grant"] == "" {
			t.Fatalf("get_my_booking: %v", got)
		}
		list := ann.read(tools.SearchMyBookings, map[string]any{"status": "pending"})
		if rs, _ := list["results"].([]any); len(rs) != 1 || rs[0].(map[string]any)["booking_reference"] != ref {
			t.Fatalf("search_my_bookings status=pending: %v", list)
		}
		if up := ann.read(tools.SearchMyBookings, map[string]any{}); len(up["results"].([]any)) != 1 {
			t.Fatalf("upcoming holds the pending booking: %v", up)
		}

		// The catalog answers: requires_confirmation, the window, and
		// self-reported credentials framed as such.
		cat := ann.read(tools.CheckBusinessAvailability, map[string]any{"business_reference": "biz-harbour-massage"})
		raw, _ := json.Marshal(cat)
		if !strings.Contains(string(raw), `"confirmation_window_minutes":720`) || !strings.Contains(string(raw), `"requires_confirmation":true`) {
			t.Fatalf("harbour catalog: %s", raw)
		}
		cat = ann.read(tools.CheckBusinessAvailability, map[string]any{"business_reference": "biz-thames-physio"})
		c, _ := cat["catalog"].(map[string]any)
		biz, _ := c["business"].(map[string]any)
		creds, _ := biz["self_reported_credentials"].(map[string]any)
		items, _ := creds["items"].([]any)
		if creds["note"] != "Reported by the business; Linkslot has not verified them." || creds["updated_at"] == "" || len(items) != 3 ||
			items[0].(map[string]any)["kind"] != "license" || items[0].(map[string]any)["valid_until"] != "2027-04-30" {
			t.Fatalf("thames credentials: %v", biz)
		}
	})
}
