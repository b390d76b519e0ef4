// Package catalogfile reads and writes the business catalog file that
// administrators import and export: businesses with their policies, opening
// hours, services and staff (the services each performs, weekly hours, time
// off), as JSON or YAML.
//
// Parse validates the whole file before returning anything, so an import
// either writes every business or none. It does not stop at the first
// mistake: every problem is collected with its path in the file
// (businesses[2].staff[0].hours.monday[1]) into a *ValidationError. To get
// those paths for both formats the file is first decoded into a plain tree
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
package catalogfile
