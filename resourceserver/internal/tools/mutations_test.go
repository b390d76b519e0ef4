package tools

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/idempotency"
)

type countingKeys struct {
	calls atomic.Int64
	key   jose.SigningKey
	fail  atomic.Bool
}

func (c *countingKeys) SigningKey(context.Context) (jose.SigningKey, error) {
	c.calls.Add(1)
	if c.fail.Load() {
		return jose.SigningKey{}, errors.New("database down")
	}
	return c.key, nil
}

func (c *countingKeys) VerificationKeys(context.Context) (*jose.JSONWebKeySet, error) {
	return &jose.JSONWebKeySet{}, nil
}

// The signing key is read once, then served from memory even while the
// source fails (the refresh runs in the background).
func TestCacheSigningKey(t *testing.T) {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	src := &countingKeys{key: jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: priv, KeyID: "k1"}}}
	c := CacheSigningKey(src, time.Hour)
	for i := 0; i < 10; i++ {
		k, err := c.SigningKey(context.Background())
		if err != nil || keyID(k.Key) != "k1" {
			t.Fatalf("%v %v", k, err)
		}
	}
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("%d source reads; want 1", n)
	}
	src.fail.Store(true)
	stale := CacheSigningKey(src, time.Nanosecond).(*signingKeyCache)
	src.fail.Store(false)
	if _, err := stale.SigningKey(context.Background()); err != nil {
		t.Fatal(err)
	}
	src.fail.Store(true)
	time.Sleep(time.Millisecond)
	if _, err := stale.SigningKey(context.Background()); err != nil {
		t.Fatalf("a cached key must survive a failing refresh: %v", err)
	}
}

func keyID(k any) string {
	if j, ok := k.(jose.JSONWebKey); ok {
		return j.KeyID
	}
	return ""
}

// Summaries are deterministic and show every fact; each action renders.
func TestSummary(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, ny)
	f := booking.Facts{Action: "create", BusinessName: "Brightcut Barbers", ServiceName: "Classic haircut", StaffName: "Marcus Reid",
		TimeZone: "America/New_York", StartsAt: start, EndsAt: start.Add(30 * time.Minute), PriceCents: 3500, Currency: "USD",
		CancellationWindowMinutes: 1440, CancellationFeeCents: 1500, Notes: "hi"}
	a, err := confirm.ForBooking(f)
	b, _ := confirm.ForBooking(f)
	if err != nil || a != b || !strings.Contains(a, "USD 35.00") || !strings.Contains(a, "America/New_York") || !strings.Contains(a, "Marcus Reid") {
		t.Fatalf("create summary: %v\n%s", err, a)
	}
	f.StaffName = "Dana Kowalski"
	if c, _ := confirm.ForBooking(f); c == a {
		t.Fatal("another staff member gave the same summary")
	}
	f.BookingReference, f.PreviousStaffName, f.PreviousStartsAt, f.PreviousEndsAt = "LS-X", "Marcus Reid", start.Add(-time.Hour), start.Add(-30*time.Minute)
	for _, action := range []string{"reschedule", "cancel"} {
		f.Action = action
		if s, err := confirm.ForBooking(f); err != nil || !strings.Contains(s, "LS-X") {
			t.Fatalf("%s summary: %v\n%s", action, err, s)
		}
	}
	f.Action = "other"
	if _, err := confirm.ForBooking(f); err == nil {
		t.Fatal("unknown action rendered")
	}
}

// Every invalid grant cause maps to the same result bytes.
func TestInvalidGrantOneAnswer(t *testing.T) {
	ts := &toolSet{}
	_, a, _ := ts.mutationFail(context.Background(), CancelMyBooking, grant.ErrInvalidGrant)
	_, b, _ := ts.mutationFail(context.Background(), CancelMyBooking, &booking.Error{Code: booking.CodeBookingChanged, Message: "Booking LS-1 changed"})
	if a.(errorOut).Error.Code != "invalid_grant" || *a.(errorOut).Error != *b.(errorOut).Error {
		t.Fatalf("%+v vs %+v", a, b)
	}
	_, c, _ := ts.mutationFail(context.Background(), CancelMyBooking, idempotency.ErrInProgress)
	if e := c.(errorOut).Error; e.Code != "rate_limited" || e.RetryAfterSec != idempotency.RetryAfterSec {
		t.Fatalf("in progress: %+v", e)
	}
}
