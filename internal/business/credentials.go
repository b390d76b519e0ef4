package business

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// Self-reported credentials (docs/reference.md §16, "Self-reported
// credentials"): an owner lists, adds, edits and removes the business's
// licenses, insurance and certifications on the console's Credentials
// page. Each change replaces the list with its audit event
// (business.credentials, the lists before and after, as
// admin.Service.SetCredentials writes it) in one transaction. A credential
// added or edited is dated now; the others keep their dates, so
// check_business_availability's updated_at says when the business last
// changed one.

// MaxCredentials bounds a business's self-reported credentials (the
// catalog file's bound, docs/catalog.md).
const MaxCredentials = 50

// CredentialKinds are the kinds of credential, in the order the page offers
// them.
var CredentialKinds = []string{store.CredentialLicense, store.CredentialInsurance, store.CredentialCertification}

// ErrCredentialsChanged: the list changed since the form was shown (another
// owner, an import). Nothing was changed.
var ErrCredentialsChanged = problem.New(problem.CodeConflict,
	"Someone else changed the credentials after this page was shown. Nothing was changed: here they are as they are now; try again if it still applies.")

// CredentialsVersion identifies a list of credentials as a page showed it:
// a form carries it back, and a change of a list that is not the same any
// more answers ErrCredentialsChanged.
func CredentialsVersion(cs []store.Credential) string {
	h := sha256.New()
	for _, c := range cs {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%d\x01", c.Kind, c.Name, c.Issuer, c.Number, c.ValidUntil, c.UpdatedAt.UnixMicro())
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// Credentials lists the business's self-reported credentials in their
// order (owners only).
func (s *Service) Credentials(ctx context.Context, m Membership) ([]store.Credential, error) {
	if err := ownerOnly(m); err != nil {
		return nil, err
	}
	return s.store.ListCredentials(ctx, m.BusinessID)
}

// checkCredential validates one credential of a form, every problem with
// the form field at fault, and returns it trimmed and NFC-normalised.
func checkCredential(c store.Credential) (store.Credential, []problem.Problem) {
	var ps []problem.Problem
	valid := false
	for _, k := range CredentialKinds {
		valid = valid || c.Kind == k
	}
	if !valid {
		ps = append(ps, problem.Problem{Path: "kind", Message: "Choose a kind: license, insurance or certification."})
	}
	for _, f := range []struct {
		path, label string
		v           *string
		required    bool
	}{{"name", "The name", &c.Name, true}, {"issuer", "The issuer", &c.Issuer, false}, {"number", "The number", &c.Number, false}} {
		*f.v = strings.TrimSpace(*f.v)
		if f.required && !textcheck.Visible(*f.v) {
			ps = append(ps, problem.Problem{Path: f.path, Message: "Give the credential's name, such as \"Public liability insurance\"."})
			continue
		}
		v, err := textcheck.Text(*f.v, 200, false)
		if err != nil {
			ps = append(ps, problem.Problem{Path: f.path, Message: f.label + " " + err.Error() + "."})
			continue
		}
		*f.v = v
	}
	c.ValidUntil = strings.TrimSpace(c.ValidUntil)
	if c.ValidUntil != "" {
		if _, err := time.Parse("2006-01-02", c.ValidUntil); err != nil {
			ps = append(ps, problem.Problem{Path: "valid_until", Message: "Give the valid-until date as a date (YYYY-MM-DD), or leave it empty."})
		}
	}
	return c, ps
}

// AddCredential adds a credential at the end of the list shown at version.
func (s *Service) AddCredential(ctx context.Context, m Membership, version string, c store.Credential) error {
	return s.changeCredentials(ctx, m, version, 0, &c)
}

// UpdateCredential replaces the credential at position pos (1 is the
// first) of the list shown at version. Saved unchanged, it keeps its date
// and nothing is written.
func (s *Service) UpdateCredential(ctx context.Context, m Membership, version string, pos int, c store.Credential) error {
	if pos < 1 {
		return ErrNotFound
	}
	return s.changeCredentials(ctx, m, version, pos, &c)
}

// RemoveCredential removes the credential at position pos (1 is the first)
// of the list shown at version.
func (s *Service) RemoveCredential(ctx context.Context, m Membership, version string, pos int) error {
	if pos < 1 {
		return ErrNotFound
	}
	return s.changeCredentials(ctx, m, version, pos, nil)
}

// changeCredentials adds c (pos 0), replaces the pos-th credential by c, or
// removes it (c nil), in the transaction that writes the audit event.
func (s *Service) changeCredentials(ctx context.Context, m Membership, version string, pos int, c *store.Credential) error {
	if err := ownerOnly(m); err != nil {
		return err
	}
	if c != nil {
		checked, ps := checkCredential(*c)
		if len(ps) > 0 {
			return invalid(ps...)
		}
		c = &checked
		c.UpdatedAt = s.now()
	}
	return s.inTx(ctx, func(tx Tx) error {
		before, err := tx.ListCredentials(ctx, m.BusinessID)
		if err != nil {
			return err
		}
		// A list changed since the form was shown says so, even when the
		// position is past its end now; past the end of the list the form
		// showed is a page that does not exist.
		if CredentialsVersion(before) != version {
			return ErrCredentialsChanged
		}
		if pos > len(before) {
			return ErrNotFound
		}
		after := make([]store.Credential, 0, len(before)+1)
		switch {
		case pos == 0:
			if len(before) >= MaxCredentials {
				return invalid(problem.Problem{Path: "credentials", Message: fmt.Sprintf("A business lists at most %d credentials: remove one first.", MaxCredentials)})
			}
			after = append(append(after, before...), *c)
		case c == nil:
			after = append(append(after, before[:pos-1]...), before[pos:]...)
		default:
			old := before[pos-1]
			if old.Kind == c.Kind && old.Name == c.Name && old.Issuer == c.Issuer && old.Number == c.Number && old.ValidUntil == c.ValidUntil {
				return nil // saved unchanged: it keeps its date
			}
			after = append(after, before...)
			after[pos-1] = *c
		}
		if err := tx.ReplaceCredentials(ctx, m.BusinessID, after); err != nil {
			return err
		}
		return s.audit(ctx, tx, m, "business.credentials", m.Business.Reference, before, after)
	})
}
