// Package catalogfile reads and writes the business catalog file that
// administrators import and export: businesses with their policies, opening
// hours, services and staff (the services each performs, weekly hours, time
// off), as JSON or YAML.
//
// Parse validates the whole file before returning anything, so an import
// either writes every business or none. It does not stop at the first
// mistake: every problem is collected with its path in the file
// (businesses[2].staff[0].hours.monday[1]) into one *problem.Error
// (invalid_input) that lists them all. To get those paths for both formats the file is first decoded into a plain tree
// (JSON with numbers kept exact; YAML through yaml.Node so that dates and
// times stay text) and then walked by hand; unknown keys are reported too,
// because a misspelt key silently ignored is how a business ends up closed.
//
// The catalogs Parse returns refer to services and staff by reference:
// Staff.ServiceIDs hold service references and StaffHours / StaffTimeOff are
// keyed by staff reference, which is what store.CatalogStore.PutCatalog
// accepts. Export accepts either that form or catalogs loaded from the store
// (keyed by ids) and writes a file that Parse reads back to the same
// catalogs.
//
// Time off is either a pair of RFC 3339 instants (starts_at, ends_at) or a
// range of local dates in the business's zone (from_date, to_date, both
// inclusive), converted to instants at local midnight. Hours are "HH:MM-HH:MM"
// strings per weekday, several per day for split shifts; "24:00" ends a day.
//
// The file, in YAML (JSON has the same keys):
//
//	businesses:
//	  - reference: lisbon-cuts          # unique in the file; [A-Za-z0-9._-], ≤ 64
//	    name: Lisbon Cuts
//	    category: appointment           # or restaurant
//	    timezone: Europe/Lisbon         # IANA
//	    currency: EUR                   # ISO 4217; services default to it
//	    city: Lisbon                    # optional: description, address too
//	    agent_booking: true             # default false
//	    booking_url: https://…          # required when a service needs a deposit
//	    contact_email: desk@example.com # optional: gets an e-mail of every booking change
//	    policies:                       # all optional
//	      min_notice_minutes: 60
//	      horizon_days: 30              # default 60; > 0 (restaurants may use 0)
//	      slot_interval_minutes: 15     # default 15; > 0 (restaurants may use 0)
//	      cancellation_window_minutes: 1440
//	      cancellation_fee_cents: 1000
//	      cancellation_policy: Free cancellation up to 24 hours before.
//	      privacy_notice: …
//	    hours: {monday: ["09:00-12:00", "13:00-19:00"], saturday: ["10:00-14:00"]}
//	    services:
//	      - {reference: cut, name: Haircut, duration_minutes: 30, price_cents: 2500,
//	         buffer_before_minutes: 0, buffer_after_minutes: 5, deposit_required: false}
//	    staff:
//	      - reference: ana
//	        name: Ana
//	        services: [cut]
//	        hours: {monday: ["09:00-12:00", "13:00-17:00"]}
//	        time_off:
//	          - {from_date: 2026-12-24, to_date: 2026-12-26, reason: Christmas}
//	          - {starts_at: "2026-12-01T09:00:00Z", ends_at: "2026-12-01T12:00:00Z"}
//
// Unknown keys are problems, not silently ignored. Payment states of
// imported bookings are out of scope: the file carries no bookings.
package catalogfile
