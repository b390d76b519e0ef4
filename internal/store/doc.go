// Package store defines Linkslot's records, the storage interfaces every
// backend implements, and the few sentinel errors callers test for.
//
// The package imports only the standard library. The gorm implementation
// for PostgreSQL and SQLite lives in store/sqlstore, which translates driver
// errors into these sentinels once, at the edge; the conformance suite in
// store/storetest runs the same tests against every backend.
//
// Instants are stored in UTC with microsecond precision (see Now and UTC);
// local times exist only in the booking engine, which resolves them once.
//
// Read-modify-write goes through closures the store runs inside its own
// transaction (UpdateClient, UpdateBooking, ...), and several writes that must
// land together use Store.InTx: a booking, its idempotency record and its
// activity entry are committed or rolled back as one.
package store
