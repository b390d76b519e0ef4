package main

import (
	"context"
	"fmt"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit"
)

// createCancel books and cancels, each with the full confirmation protocol
// (summarize, then confirm with an idempotency key): four tool calls per
// operation. Every worker has its own staff member of a bench business and
// books the same slot again once it is cancelled, so workers never collide.
type createCancel struct {
	sys    *system
	people []*person
	start  time.Time
	n      int64
}

func newCreateCancel(sys *system, people []*person) *createCancel {
	ctx := context.Background()
	var hours []store.HoursWindow
	for d := time.Sunday; d <= time.Saturday; d++ {
		hours = append(hours, store.HoursWindow{Weekday: d, StartMin: 0, EndMin: 24 * 60})
	}
	cat := store.Catalog{
		Business: store.Business{Reference: "biz-bench", Name: "Bench Salon", Category: store.CategoryAppointment, City: "Benchville",
			Address: "1 Loop Road", TimeZone: "UTC", AgentBooking: true, HorizonDays: 30, SlotIntervalMinutes: 15, Currency: "USD",
			CancellationPolicy: "Free cancellation.", PrivacyNotice: "Notes are visible to the business."},
		OpeningHours: hours,
		Services:     []store.Service{{Reference: "svc-bench", Name: "Bench cut", DurationMinutes: 30, PriceCents: 1000, Currency: "USD"}},
		StaffHours:   map[string][]store.HoursWindow{},
	}
	for i := range people {
		ref := fmt.Sprintf("stf-bench-%d", i)
		cat.Staff = append(cat.Staff, store.Staff{Reference: ref, Name: ref, ServiceIDs: []string{"svc-bench"}})
		cat.StaffHours[ref] = hours
	}
	if _, err := sys.store.PutCatalog(ctx, cat); err != nil {
		fatal(err)
	}
	d := time.Now().UTC().AddDate(0, 0, 2)
	return &createCancel{sys: sys, people: people, start: time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, time.UTC)}
}

// mutate summarizes then confirms one mutation.
func (c *createCancel) mutate(ctx context.Context, p *person, tool string, args map[string]any) (map[string]any, error) {
	sum, err := toolCall(ctx, p.api, c.sys.resource, p.access, tool, args)
	if err != nil && testkit.FindString(sum, "code") != "confirmation_required" {
		return nil, err
	}
	summary := testkit.FindString(sum, "confirmed_summary")
	if summary == "" {
		return nil, fmt.Errorf("%s: no summary to confirm", tool)
	}
	return toolCall(ctx, p.api, c.sys.resource, p.access, tool, testkit.ConfirmedArgs(args, summary, "bench-"+randHex(10), "Yes."))
}

func (c *createCancel) op(ctx context.Context, w int) error {
	p := c.people[w]
	res, err := c.mutate(ctx, p, "create_my_booking", map[string]any{"business_reference": "biz-bench", "service_reference": "svc-bench",
		"staff_reference": fmt.Sprintf("stf-bench-%d", w), "starts_at": c.start.Format(time.RFC3339)})
	if err != nil {
		return err
	}
	ref, grant := testkit.FindString(res, "booking_reference"), testkit.FindString(res, "grant")
	if ref == "" || grant == "" {
		return fmt.Errorf("create answer without booking_reference or grant")
	}
	_, err = c.mutate(ctx, p, "cancel_my_booking", map[string]any{"booking_reference": ref, "grant": grant, "reason": "bench"})
	return err
}
