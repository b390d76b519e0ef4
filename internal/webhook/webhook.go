// Package webhook signs and delivers booking events to the URLs businesses
// register, with the Standard Webhooks scheme (standardwebhooks.com):
//
//	webhook-id:        the event's id, the same on every retry
//	webhook-timestamp: Unix seconds of this attempt
//	webhook-signature: v1,BASE64(HMAC-SHA256(key, id + "." + timestamp + "." + body))
//
// where the key is the bytes after "whsec_" in the endpoint's secret
// (base64 of 32 random bytes). A secret is shown once, when it is created or
// rotated, and stored sealed with AES-GCM under a key derived from
// LINKSLOT_SECRET_KEY, bound to the endpoint id.
//
// Deliveries go out through internal/safefetch's address rules (public
// addresses only; loopback too in development), never follow a redirect,
// and wait at most 10 s for an answer. A 2xx answer is delivered; anything
// else, or no answer, is retried by the outbox.
package webhook

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/store"
)

// SecretPrefix starts every endpoint secret.
const SecretPrefix = "whsec_"

// NewSecret returns a fresh secret: "whsec_" + base64 of 32 random bytes.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("webhook: crypto/rand failed: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Key returns the HMAC key of a secret: the bytes the base64 after
// "whsec_" encodes.
func Key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(k) == 0 {
		return nil, errors.New("webhook: malformed secret")
	}
	return k, nil
}

// Sign returns the webhook-signature header value of one attempt.
func Sign(key []byte, id string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Sealer seals endpoint secrets at rest.
type Sealer struct{ aead cipher.AEAD }

// NewSealer derives the sealing key from LINKSLOT_SECRET_KEY.
func NewSealer(secretKey []byte) (*Sealer, error) {
	if len(secretKey) < 32 {
		return nil, errors.New("webhook: the secret key must have at least 32 bytes")
	}
	k := sha256.Sum256(append([]byte("linkslot webhook endpoint secrets\x00"), secretKey...))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts an endpoint's secret, bound to its id.
func (s *Sealer) Seal(endpointID, secret string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("webhook: crypto/rand failed: " + err.Error())
	}
	return s.aead.Seal(nonce, nonce, []byte(secret), []byte(endpointID))
}

// ErrUnseal: a sealed secret cannot be opened (another secret key, or it was
// altered).
var ErrUnseal = errors.New("webhook: the endpoint's secret cannot be decrypted with this LINKSLOT_SECRET_KEY")

// Open decrypts an endpoint's secret.
func (s *Sealer) Open(endpointID string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", ErrUnseal
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(endpointID))
	if err != nil {
		return "", ErrUnseal
	}
	return string(plain), nil
}

// Endpoints reads endpoints at delivery time.
type Endpoints interface {
	GetWebhookEndpoint(ctx context.Context, id string) (store.WebhookEndpoint, error)
}

// Timeout is how long a delivery waits for an answer.
const Timeout = 10 * time.Second

// Deliverer delivers webhook outbox messages.
type Deliverer struct {
	Endpoints Endpoints
	Sealer    *Sealer
	// Client sends the requests (default: safefetch.NewClient with the
	// production rules, or loopback too when Development).
	Client      *http.Client
	Development bool
	Clock       store.Clock // default store.SystemClock

	once   sync.Once
	client *http.Client // Client, or the default built once and shared by every delivery
}

// NewClient is the HTTP client for deliveries: safefetch's address rules, no
// redirects, TLS verified against roots (nil: the system trust store).
func NewClient(development bool, opts safefetch.DialOptions) *http.Client {
	return safefetch.NewClient(safefetch.Rules{AllowLoopback: development}, opts)
}

var _ outbox.Deliverer = (*Deliverer)(nil)

// Deliver posts one event to its endpoint's current URL.
func (d *Deliverer) Deliver(ctx context.Context, m store.OutboxMessage) outbox.Result {
	ep, err := d.Endpoints.GetWebhookEndpoint(ctx, m.EndpointID)
	if errors.Is(err, store.ErrNotFound) {
		return outbox.Result{Err: errors.New("the endpoint was deleted"), Permanent: true}
	}
	if err != nil {
		return outbox.Result{Err: fmt.Errorf("read endpoint: %w", err)}
	}
	if !ep.Enabled {
		return outbox.Result{Err: errors.New("the endpoint is disabled"), Permanent: true}
	}
	if _, err := safefetch.CheckURL(ep.URL, d.Development); err != nil {
		return outbox.Result{Err: fmt.Errorf("endpoint URL refused: %w", err), Permanent: true}
	}
	secret, err := d.Sealer.Open(ep.ID, ep.SecretEncrypted)
	if err != nil {
		return outbox.Result{Err: err, Permanent: true}
	}
	key, err := Key(secret)
	if err != nil {
		return outbox.Result{Err: err, Permanent: true}
	}
	clock := d.Clock
	if clock == nil {
		clock = store.SystemClock
	}
	d.once.Do(func() {
		if d.client = d.Client; d.client == nil {
			d.client = NewClient(d.Development, safefetch.DialOptions{})
		}
	})
	ts := clock()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(m.Payload))
	if err != nil {
		return outbox.Result{Err: errors.New("cannot build the request"), Permanent: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Linkslot-Webhooks/1")
	req.Header.Set("webhook-id", m.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", Sign(key, m.ID, ts, m.Payload))
	resp, err := d.client.Do(req)
	if err != nil {
		return outbox.Result{Err: describe(err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return outbox.Result{StatusCode: resp.StatusCode, Err: fmt.Errorf("the endpoint answered %d", resp.StatusCode)}
	}
	return outbox.Result{OK: true, StatusCode: resp.StatusCode}
}

// describe turns a transport error into a sentence without the URL's query.
func describe(err error) error {
	switch {
	case safefetch.IsAddressRefused(err):
		return errors.New("the endpoint's address is not allowed (private, loopback or reserved)")
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer within %s", Timeout)
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return fmt.Errorf("request failed: %v", inner)
		}
	}
	return errors.New("request failed")
}
