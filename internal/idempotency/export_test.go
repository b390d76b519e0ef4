package idempotency

// SetBeforeComplete installs a fault between the mutation's writes and the
// idempotency record's completion, inside the transaction (tests only).
func SetBeforeComplete(k *Keeper, fn func() error) { k.beforeComplete = fn }

// SetAfterLookup installs a function Run calls after its fast-path lookup
// missed and before its transaction (tests only).
func SetAfterLookup(k *Keeper, fn func()) { k.afterLookup = fn }

// Retryable exposes retryable to tests.
var Retryable = retryable
