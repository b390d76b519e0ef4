package cimd

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// Policy is LINKSLOT_CIMD_POLICY.
type Policy string

// The policies.
const (
	PolicyRegistered Policy = "registered"
	PolicyOpen       Policy = "open"
	PolicyOff        Policy = "off"
)

// DefaultOpenScopes is LINKSLOT_CIMD_OPEN_SCOPES's default.
var DefaultOpenScopes = []string{scope.BookingsRead, scope.BookingsWrite}

// ParsePolicy reads a policy name; "" is the default.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "":
		return PolicyRegistered, nil
	case PolicyRegistered, PolicyOpen, PolicyOff:
		return Policy(s), nil
	}
	return "", fmt.Errorf("must be registered, open or off (got %q)", s)
}

// Refusal is why a URL client may not link, in words a person reads on the
// error page. Rule is a short identifier for the log.
type Refusal struct {
	Rule    string
	Title   string
	Message string
	Err     error // the cause, for the log (never a document body)
}

func (r *Refusal) Error() string {
	msg := "cimd: refused (" + r.Rule + ")"
	if r.Err != nil {
		msg += ": " + r.Err.Error()
	}
	return msg
}

func (r *Refusal) Unwrap() error { return r.Err }

// Client is a URL client ready for use: its record with the document's
// name and redirect URIs folded in.
type Client struct {
	store.Client
	Doc *Document
	// Open is set when the client links only because the policy is open.
	Open bool
}

// Recorded reports whether the client has a store record yet.
func (c Client) Recorded() bool { return !c.CreatedAt.IsZero() }

// Options configure a Resolver.
type Options struct {
	Policy      Policy
	OpenScopes  []string // default DefaultOpenScopes
	Development bool
	// Fetch options for the document fetcher (tests set Resolver, RootCAs).
	Resolver safefetch.Resolver
	Timeout  time.Duration
	Observe  func(kind, outcome string)
	Now      func() time.Time
	RootCAs  *x509.CertPool
}

// ClientReader is the store the resolver reads.
type ClientReader interface {
	GetClient(ctx context.Context, id string) (store.Client, error)
}

// Resolver looks URL clients up under the policy.
type Resolver struct {
	opts    Options
	store   ClientReader
	fetcher *safefetch.Fetcher[*Document]
}

// NewResolver builds a resolver on s.
func NewResolver(s ClientReader, opts Options) *Resolver {
	if opts.Policy == "" {
		opts.Policy = PolicyRegistered
	}
	if opts.OpenScopes == nil {
		opts.OpenScopes = DefaultOpenScopes
	}
	dev := opts.Development
	return &Resolver{opts: opts, store: s, fetcher: safefetch.New(safefetch.Options[*Document]{
		Kind: "cimd", Development: dev, Timeout: opts.Timeout, Resolver: opts.Resolver, RootCAs: opts.RootCAs,
		Observe: opts.Observe, Now: opts.Now,
		Decode: func(u string, body []byte) (*Document, error) { return Parse(u, body, dev) },
	})}
}

// Policy is the resolver's policy.
func (r *Resolver) Policy() Policy {
	if r == nil {
		return PolicyOff
	}
	return r.opts.Policy
}

// Development reports whether development URLs are accepted.
func (r *Resolver) Development() bool { return r != nil && r.opts.Development }

// Forget drops the cached document of id (the client was changed).
func (r *Resolver) Forget(id string) {
	if r != nil {
		r.fetcher.Forget(id)
	}
}

var (
	refuseOff = &Refusal{Rule: "policy_off", Title: "Unknown application",
		Message: "This Linkslot server does not accept apps that identify themselves by a web address. Ask the app's maker for a client ID registered here."}
	refuseDisabled = &Refusal{Rule: "disabled", Title: "This app has been disabled",
		Message: "An administrator of this Linkslot server has disabled this app, so it cannot link to your account. Nothing was shared."}
)

// refuseUnregistered names the address, so that the person can tell an
// administrator what to register.
func refuseUnregistered(id string) *Refusal {
	return &Refusal{Rule: "not_registered", Title: "This app is not registered here",
		Message: "The app identifies itself by the web address " + id + ", which no administrator of this Linkslot server has registered, so it cannot link to your account. Nothing was shared. If you trust this app, ask an administrator of this server to register that address."}
}

// Lookup returns the URL client id under the policy, or a *Refusal. An
// unknown URL under the registered policy is refused without fetching.
func (r *Resolver) Lookup(ctx context.Context, id string) (Client, error) {
	if r == nil || r.opts.Policy == PolicyOff {
		return Client{}, refuseOff
	}
	rec, err := r.store.GetClient(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if r.opts.Policy != PolicyOpen {
			return Client{}, refuseUnregistered(id)
		}
		rec = r.openRecord(id)
	case err != nil:
		return Client{}, err
	case rec.Disabled:
		return Client{}, refuseDisabled
	case rec.OpenLinked && r.opts.Policy != PolicyOpen:
		return Client{}, refuseUnregistered(id)
	}
	doc, err := r.document(ctx, rec)
	if err != nil {
		return Client{}, err
	}
	return r.merge(rec, doc), nil
}

// Check fetches (or reads the pinned copy of) a document for an
// administrator registering it, whatever the policy.
func (r *Resolver) Check(ctx context.Context, id, pinned string) (*Document, error) {
	return r.document(ctx, store.Client{ID: id, PinnedDocument: pinned})
}

func (r *Resolver) document(ctx context.Context, rec store.Client) (*Document, error) {
	if err := CheckURL(rec.ID, r.opts.Development); err != nil {
		return nil, describeInvalid(rec.ID, err)
	}
	if rec.PinnedDocument != "" {
		d, err := Parse(rec.ID, []byte(rec.PinnedDocument), r.opts.Development)
		if err != nil {
			return nil, describeInvalid(rec.ID, err)
		}
		return d, nil
	}
	d, err := r.fetcher.Get(ctx, rec.ID)
	if err != nil {
		var inv *Invalid
		if errors.As(err, &inv) {
			return nil, describeInvalid(rec.ID, inv)
		}
		return nil, &Refusal{Rule: "fetch_" + string(safefetch.ReasonOf(err)), Title: "The app's description could not be read",
			Message: "Linkslot could not read the description this app publishes at " + rec.ID + ": " + safefetch.ReasonOf(err).Describe() + ". Nothing was shared; try again later, or tell the app's maker.",
			Err:     err}
	}
	return d, nil
}

func describeInvalid(id string, err error) error {
	var inv *Invalid
	rule := "invalid document"
	if errors.As(err, &inv) {
		rule = inv.Rule
	}
	return &Refusal{Rule: "invalid_document", Title: "The app's description is not valid",
		Message: "The description this app publishes at " + id + " breaks a rule Linkslot checks: " + rule + ". Nothing was shared; tell the app's maker.",
		Err:     err}
}

// openRecord is the record an unknown client gets under the open policy.
func (r *Resolver) openRecord(id string) store.Client {
	allowed := append(scope.Public(), r.opts.OpenScopes...)
	return store.Client{ID: id, OpenLinked: true, AllowedScopes: scope.Expand(allowed),
		DefaultScopes: scope.Expand(r.opts.OpenScopes),
		GrantTypes:    []string{clients.GrantAuthorizationCode, clients.GrantRefreshToken}}
}

// merge folds the document into the record. Under the open policy the
// scopes are capped at the public scopes and LINKSLOT_CIMD_OPEN_SCOPES.
func (r *Resolver) merge(rec store.Client, doc *Document) Client {
	c := rec
	c.Name = doc.ClientName
	c.RedirectURIs = slices.Clone(doc.RedirectURIs)
	c.LogoURL = doc.LogoURI
	c.Public = doc.AuthMethod() == AuthNone
	c.SecretHash = ""
	c.JWKSURI = doc.JWKSURI
	if doc.IDTokenSignedResponseAlg != "" {
		c.IDTokenSignedResponseAlg = doc.IDTokenSignedResponseAlg
	}
	open := rec.OpenLinked
	if open {
		capSet := map[string]bool{}
		for _, s := range append(scope.Public(), scope.Expand(r.opts.OpenScopes)...) {
			capSet[s] = true
		}
		keep := func(list []string) []string {
			return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return !capSet[s] })
		}
		c.AllowedScopes, c.DefaultScopes = keep(c.AllowedScopes), keep(c.DefaultScopes)
	}
	return Client{Client: c, Doc: doc, Open: open}
}

// NewRecord is the store record an open-policy client gets when a person
// first approves it.
func (c Client) NewRecord(now time.Time) store.Client {
	rec := c.Client
	rec.RedirectURIs, rec.LogoURL, rec.JWKSURI = nil, "", ""
	rec.CreatedAt, rec.UpdatedAt = now, now
	return rec
}
