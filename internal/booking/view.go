package booking

import "github.com/linkslot/linkslot/internal/store"

// ViewFromFacts renders a booking written by a mutation with the names its
// plan already resolved, so that no read outside the transaction is needed:
// the booking as get_my_booking shows it.
func ViewFromFacts(f Facts, b store.Booking) BookingView {
	loc := f.StartsAt.Location()
	v := BookingView{Reference: b.Reference, Status: b.Status, Version: b.Version,
		BusinessReference: f.BusinessReference, BusinessName: f.BusinessName, ServiceReference: f.ServiceReference,
		ServiceName: f.ServiceName, StaffReference: f.StaffReference, StaffName: f.StaffName, TimeZone: f.TimeZone,
		StartsAt: b.StartsAt.In(loc), EndsAt: b.EndsAt.In(loc), PriceCents: b.PriceCents, Currency: b.Currency,
		Notes: b.Notes, PaymentState: b.PaymentState, CancellationPolicy: f.CancellationPolicy, CancelReason: b.CancelReason,
		CancellationFeeCents: b.CancellationFeeCents, CreatedAt: b.CreatedAt.In(loc), Record: b}
	if v.PaymentState == "" {
		v.PaymentState = store.PaymentNone
	}
	if b.CancelledAt != nil {
		t := b.CancelledAt.In(loc)
		v.CancelledAt = &t
	}
	if b.RespondBy != nil {
		t := b.RespondBy.In(loc)
		v.RespondBy = &t
	}
	return v
}
