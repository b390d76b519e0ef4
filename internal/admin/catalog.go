package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Businesses: the catalog file imported and exported, and the business list and its settings.

// ImportCatalog validates a catalog file as a whole and then writes every
// business in it in one transaction: a bad file changes nothing and answers
// ErrInvalid with every problem and its path. It returns the imported
// business references in file order.
func (s *Service) ImportCatalog(ctx context.Context, a Actor, data []byte, format string) ([]string, error) {
	res, err := s.ImportCatalogReport(ctx, a, data, format)
	return res.Imported, err
}

// ImportResult is what an import did: the business references written, in
// file order, and the warnings of catalogfile.Warnings (staff with no
// hours, services nobody performs), which did not stop it.
type ImportResult struct {
	Imported []string  `json:"imported"`
	Warnings []Problem `json:"warnings"`
}

// ImportCatalogReport is ImportCatalog with the file's warnings.
func (s *Service) ImportCatalogReport(ctx context.Context, a Actor, data []byte, format string) (ImportResult, error) {
	if catalogfile.NormalizeFormat(format) == "" {
		return ImportResult{}, invalid("format", fmt.Sprintf("unknown catalog format %q (want json or yaml)", format))
	}
	cats, err := catalogfile.Parse(data, format)
	if err != nil {
		if ve, ok := problem.As(err); ok {
			return ImportResult{}, invalidInput(ve.Problems...)
		}
		return ImportResult{}, err
	}
	warnings := catalogfile.Warnings(cats)
	if warnings == nil {
		warnings = []Problem{}
	}
	refs := make([]string, len(cats))
	err = s.inTx(ctx, func(tx Tx) error {
		for i, c := range cats {
			ref := c.Business.Reference
			refs[i] = ref
			var before any
			if old, err := tx.LoadCatalog(ctx, ref); err == nil {
				if before, err = catalogJSON(old); err != nil {
					return err
				}
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			saved, err := tx.PutCatalog(ctx, c)
			if err != nil {
				var inUse *store.InUseError
				if errors.As(err, &inUse) {
					return invalid(fmt.Sprintf("businesses[%d]", i),
						fmt.Sprintf("%s %q still has bookings; keep it in the file, or cancel its bookings first", inUse.Kind, inUse.Reference))
				}
				return fmt.Errorf("admin: import business %q: %w", ref, err)
			}
			after, err := catalogJSON(saved)
			if err != nil {
				return err
			}
			if err := s.audit(ctx, tx, a, "catalog.import", ref, before, after); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	return ImportResult{Imported: refs, Warnings: warnings}, nil
}

// withField names the field of a domain error.
func withField(err error, field string) error {
	if e, ok := problem.As(err); ok {
		return e.WithField(field)
	}
	return err
}

// catalogJSON is one business in the file's JSON form, for the audit log.
func catalogJSON(c store.Catalog) (json.RawMessage, error) {
	b, err := catalogfile.Export([]store.Catalog{c}, catalogfile.FormatJSON)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Businesses []json.RawMessage `json:"businesses"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Businesses) != 1 {
		return nil, fmt.Errorf("admin: catalog audit document: %v", err)
	}
	return doc.Businesses[0], nil
}

// ExportCatalog writes every business as a catalog file in format. The
// export is audited (it copies the whole catalog out).
func (s *Service) ExportCatalog(ctx context.Context, a Actor, format string) ([]byte, error) {
	if catalogfile.NormalizeFormat(format) == "" {
		return nil, invalid("format", fmt.Sprintf("unknown catalog format %q (want json or yaml)", format))
	}
	bs, err := s.store.ListBusinesses(ctx)
	if err != nil {
		return nil, err
	}
	cats := make([]store.Catalog, 0, len(bs))
	for _, b := range bs {
		c, err := s.store.LoadCatalogByID(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		cats = append(cats, c)
	}
	out, err := catalogfile.Export(cats, format)
	if err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx Tx) error {
		return s.audit(ctx, tx, a, "catalog.export", catalogfile.NormalizeFormat(format), nil, map[string]int{"businesses": len(cats)})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BusinessInfo is a business as the admin list shows it.
type BusinessInfo struct {
	Reference    string `json:"reference"`
	Name         string `json:"name"`
	Category     string `json:"category"`
	City         string `json:"city,omitempty"`
	TimeZone     string `json:"timezone"`
	AgentBooking bool   `json:"agent_booking"`
	ContactEmail string `json:"contact_email,omitempty"`
}

func businessInfo(b store.Business) BusinessInfo {
	return BusinessInfo{Reference: b.Reference, Name: b.Name, Category: b.Category, City: b.City, TimeZone: b.TimeZone,
		AgentBooking: b.AgentBooking, ContactEmail: b.ContactEmail}
}

// ListBusinesses returns every business ordered by reference.
func (s *Service) ListBusinesses(ctx context.Context) ([]BusinessInfo, error) {
	bs, err := s.store.ListBusinesses(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]BusinessInfo, len(bs))
	for i, b := range bs {
		out[i] = businessInfo(b)
	}
	return out, nil
}

// SetAgentBooking switches whether agents may find and book a business.
func (s *Service) SetAgentBooking(ctx context.Context, a Actor, reference string, on bool) (BusinessInfo, error) {
	var out store.Business
	err := s.inTx(ctx, func(tx Tx) error {
		before, err := tx.GetBusiness(ctx, reference)
		if err != nil {
			return translate(err, fmt.Sprintf("no business with reference %q", reference))
		}
		out, err = tx.SetAgentBooking(ctx, reference, on)
		if err != nil {
			return translate(err, fmt.Sprintf("no business with reference %q", reference))
		}
		return s.audit(ctx, tx, a, "business.agent_booking", reference,
			map[string]bool{"agent_booking": before.AgentBooking}, map[string]bool{"agent_booking": out.AgentBooking})
	})
	if err != nil {
		return BusinessInfo{}, err
	}
	return businessInfo(out), nil
}
