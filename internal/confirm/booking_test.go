package confirm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
)

// Summaries are deterministic and show every fact; each action renders.
func TestForBooking(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, ny)
	f := booking.Facts{Action: "create", BusinessName: "Brightcut Barbers", ServiceName: "Classic haircut", StaffName: "Marcus Reid",
		TimeZone: "America/New_York", StartsAt: start, EndsAt: start.Add(30 * time.Minute), PriceCents: 3500, Currency: "USD",
		CancellationWindowMinutes: 1440, CancellationFeeCents: 1500, Notes: "hi"}
	a, err := confirm.ForBooking(f)
	b, _ := confirm.ForBooking(f)
	if err != nil || a != b || !strings.Contains(a, "USD 35.00") || !strings.Contains(a, "America/New_York") || !strings.Contains(a, "Marcus Reid") {
		t.Fatalf("create summary: %v\n%s", err, a)
	}
	f.StaffName = "Dana Kowalski"
	if c, _ := confirm.ForBooking(f); c == a {
		t.Fatal("another staff member gave the same summary")
	}
	f.BookingReference, f.PreviousStaffName, f.PreviousStartsAt, f.PreviousEndsAt = "LS-X", "Marcus Reid", start.Add(-time.Hour), start.Add(-30*time.Minute)
	for _, action := range []string{"reschedule", "cancel"} {
		f.Action = action
		if s, err := confirm.ForBooking(f); err != nil || !strings.Contains(s, "LS-X") {
			t.Fatalf("%s summary: %v\n%s", action, err, s)
		}
	}
	f.Action = "other"
	if _, err := confirm.ForBooking(f); err == nil {
		t.Fatal("unknown action rendered")
	}
}
