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
// Consumers ask for the narrowest interface: each declares the part of
// Store it uses (identity.Store, booking.Store, idempotency.Store,
// admin.Store and admin.Tx, consentui.Store, endpoint.Store,
// fositestore.Backend), with a compile-time check that Store satisfies it.
//
// Read-modify-write goes through closures the store runs inside its own
// transaction (UpdateClient, UpdateBooking, ...), and several writes that must
// land together use Store.InTx: a booking, its idempotency record and its
// activity entry are committed or rolled back as one. Store.Begin serves a
// caller whose protocol begins and ends a transaction in separate calls
// (fosite's storage.Transactional); its Tx is bound to the context it was
// begun with.
package store
