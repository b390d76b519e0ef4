// Package storetest is the storage conformance suite: RunTests exercises
// every method of store.Store, concurrency cases included, against whatever
// backend a test hands it. Like Dex's storage/conformance, it knows no
// backend: each backend runs it from its own test files (sqlstore's
// conformance_test.go runs it on SQLite and PostgreSQL, opened through
// sqlstore/sqltest), so the suite imports only package store.
//
// Faults wraps any store.Store to fail on purpose at a chosen point, for
// tests of what a failure leaves behind; production code has no such hooks.
package storetest
