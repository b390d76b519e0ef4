package tools

import "testing"

func TestTranslateValidation(t *testing.T) {
	for _, tc := range []struct{ msg, field string }{
		{`validating "arguments": validating root: required: missing properties: ["query"]`, "query"},
		{`validating "arguments": validating root: unexpected additional properties ["colour"]`, "colour"},
		{`validating "arguments": validating /properties/limit: type: ten has type "string", want one of "null, integer"`, "limit"},
		{`something else entirely`, ""},
	} {
		e := translateValidation(tc.msg)
		if e.Code != "invalid_argument" || e.Field != tc.field || e.Message == "" {
			t.Errorf("%q: %+v, want field %q", tc.msg, e, tc.field)
		}
	}
}

func TestRequiredScope(t *testing.T) {
	for name, want := range map[string]string{
		SearchBookableBusiness: "bookings:read", CheckBusinessAvailability: "bookings:read", SearchMyBookings: "bookings:read",
		GetMyBooking: "bookings:read", CheckMyBookingAvailability: "bookings:read",
		CreateMyBooking: "bookings:write", RescheduleMyBooking: "bookings:write", CancelMyBooking: "bookings:write",
	} {
		if got, ok := RequiredScope(name); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", name, got, ok, want)
		}
	}
	if _, ok := RequiredScope("no_such_tool"); ok {
		t.Error("unknown tool has a scope")
	}
}
