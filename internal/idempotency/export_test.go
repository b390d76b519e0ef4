package idempotency

// Retryable exposes retryable to tests.
var Retryable = retryable
