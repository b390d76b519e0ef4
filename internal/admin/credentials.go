package admin

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// MaxCredentials bounds a business's self-reported credentials.
const MaxCredentials = 50

// CheckCredentials validates a business's self-reported credentials (the
// catalog file's rules, docs/catalog.md): each a kind (license, insurance,
// certification), a name of one line, an optional issuer and number of one
// line, and an optional valid-until date YYYY-MM-DD. Every problem is
// listed, with its path credentials[i].field.
func CheckCredentials(cs []store.Credential) error {
	var ps []Problem
	if len(cs) > MaxCredentials {
		ps = append(ps, Problem{Path: "credentials", Message: fmt.Sprintf("at most %d credentials", MaxCredentials)})
	}
	for i, c := range cs {
		p := "credentials[" + strconv.Itoa(i) + "]."
		switch c.Kind {
		case store.CredentialLicense, store.CredentialInsurance, store.CredentialCertification:
		default:
			ps = append(ps, Problem{Path: p + "kind", Message: "choose license, insurance or certification"})
		}
		for _, f := range []struct {
			name, v  string
			required bool
		}{{"name", c.Name, true}, {"issuer", c.Issuer, false}, {"number", c.Number, false}} {
			if f.required && f.v == "" {
				ps = append(ps, Problem{Path: p + f.name, Message: "is required"})
				continue
			}
			if _, err := textcheck.Text(f.v, 200, false); err != nil {
				ps = append(ps, Problem{Path: p + f.name, Message: err.Error()})
			}
		}
		if c.ValidUntil != "" {
			if _, err := time.Parse("2006-01-02", c.ValidUntil); err != nil {
				ps = append(ps, Problem{Path: p + "valid_until", Message: "is not a date YYYY-MM-DD"})
			}
		}
	}
	if len(ps) > 0 {
		return invalidInput(ps...)
	}
	return nil
}

// SetCredentials replaces the self-reported credentials of the business
// with reference, audited as business.credentials with the lists before and
// after. Bad input changes nothing and names every problem. A credential
// kept unchanged keeps its updated-at date.
func (s *Service) SetCredentials(ctx context.Context, a Actor, reference string, cs []store.Credential) error {
	if err := CheckCredentials(cs); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx Tx) error {
		b, err := tx.GetBusiness(ctx, reference)
		if err != nil {
			return translate(err, fmt.Sprintf("no business with reference %q", reference))
		}
		before, err := tx.ListCredentials(ctx, b.ID)
		if err != nil {
			return err
		}
		if err := tx.ReplaceCredentials(ctx, b.ID, cs); err != nil {
			return err
		}
		return s.audit(ctx, tx, a, "business.credentials", reference, before, cs)
	})
}
