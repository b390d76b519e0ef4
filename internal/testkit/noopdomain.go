package testkit

import (
	"context"

	"github.com/linkslot/linkslot/internal/booking"
)

// NoopDomain answers the resource server's read tools without touching the
// database (rshttp.Deps.Domain): the baseline of the availability
// benchmarks, a no-op tool on the same server, with the same HTTP, MCP and
// authentication, so that the comparison isolates the booking engine and
// the size of its answers. Availability answers the question's references
// and no staff.
type NoopDomain struct{}

func (NoopDomain) SearchBusinesses(context.Context, string, string, int, int) (booking.BusinessPage, error) {
	return booking.BusinessPage{}, nil
}

func (NoopDomain) Catalog(context.Context, string) (booking.CatalogView, error) {
	return booking.CatalogView{}, nil
}

func (NoopDomain) Availability(_ context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	return booking.Availability{BusinessReference: q.BusinessRef, ServiceReference: q.ServiceRef, LocalDate: q.LocalDate,
		TimeZone: "America/New_York", Staff: []booking.StaffSlots{}}, nil
}

func (NoopDomain) MyBookings(context.Context, string, string, int, int) (booking.BookingPage, error) {
	return booking.BookingPage{}, nil
}

func (NoopDomain) MyBooking(context.Context, string, string) (booking.BookingView, error) {
	return booking.BookingView{}, nil
}

func (NoopDomain) RescheduleAvailability(context.Context, string, string, string, string) (booking.Availability, error) {
	return booking.Availability{}, nil
}
