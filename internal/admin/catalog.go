package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Businesses: the catalog file imported and exported, and the business list and its settings.

// ImportCatalog validates a catalog file as a whole and then writes it,
// one business per transaction (ImportCatalogProgress). It returns the
// imported business references in file order.
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
	return s.ImportCatalogProgress(ctx, a, data, format, nil)
}

// ImportCatalogProgress validates the whole file first: a bad file changes
// nothing and answers ErrInvalid with every problem and its path, a file
// over catalogfile.MaxFileBytes or catalogfile.MaxBusinesses answers
// problem.CodeRequestTooLarge with the limit named. Then it writes one
// business per transaction, with its audit event, so that no transaction
// holds the database's write lock for longer than one business takes and a
// large import never stalls token rotations and bookings
// (docs/reference.md §6). progress, when not nil, is called after each
// business with the number written and the total.
//
// Once validated, a write fails only when the database does (or when a
// business still has bookings on a service or staff member the file
// removes); the import stops there. The result then lists the businesses
// already written, and the error says how many: an import replaces each
// business by its reference, so importing the same file again completes it.
func (s *Service) ImportCatalogProgress(ctx context.Context, a Actor, data []byte, format string, progress func(done, total int)) (ImportResult, error) {
	if catalogfile.NormalizeFormat(format) == "" {
		return ImportResult{}, invalid("format", fmt.Sprintf("unknown catalog format %q (want json or yaml)", format))
	}
	cats, err := catalogfile.Parse(data, format)
	if err != nil {
		if ve, ok := problem.As(err); ok {
			if ve.Code == problem.CodeRequestTooLarge {
				return ImportResult{}, ve
			}
			return ImportResult{}, invalidInput(ve.Problems...)
		}
		return ImportResult{}, err
	}
	warnings := catalogfile.Warnings(cats)
	if warnings == nil {
		warnings = []Problem{}
	}
	if err := s.checkRemovals(ctx, cats); err != nil {
		return ImportResult{}, err
	}
	res := ImportResult{Imported: make([]string, 0, len(cats)), Warnings: warnings}
	for i, c := range cats {
		if err := s.importBusiness(ctx, a, i, c); err != nil {
			return res, stopped(err, i, len(cats))
		}
		res.Imported = append(res.Imported, c.Business.Reference)
		if progress != nil {
			progress(i+1, len(cats))
		}
	}
	return res, nil
}

// errTrial rolls back a trial write.
var errTrial = errors.New("admin: trial write rolled back")

// checkRemovals refuses, before anything is written, a file that drops a
// service or staff member that still has bookings, listing every such
// business. Only stored businesses whose file entry leaves out one of their
// services or staff are tried, each in a transaction of its own that is
// rolled back.
func (s *Service) checkRemovals(ctx context.Context, cats []store.Catalog) error {
	stored, err := s.store.ListBusinesses(ctx)
	if err != nil {
		return err
	}
	ids := make(map[string]string, len(stored))
	for _, b := range stored {
		ids[b.Reference] = b.ID
	}
	var problems []Problem
	for i, c := range cats {
		id, ok := ids[c.Business.Reference]
		if !ok {
			continue
		}
		old, err := s.store.LoadCatalogByID(ctx, id)
		if err != nil {
			return err
		}
		if !drops(old, c) {
			continue
		}
		err = s.inTx(ctx, func(tx Tx) error {
			if _, err := tx.PutCatalog(ctx, c); err != nil {
				return err
			}
			return errTrial
		})
		if p, ok := inUseProblem(i, err); ok {
			problems = append(problems, p)
		} else if !errors.Is(err, errTrial) {
			return err
		}
	}
	if len(problems) > 0 {
		return invalidInput(problems...)
	}
	return nil
}

// drops reports whether c leaves out a service or staff member of old.
func drops(old, c store.Catalog) bool {
	refs := map[string]bool{}
	for _, sv := range c.Services {
		refs["service "+sv.Reference] = true
	}
	for _, st := range c.Staff {
		refs["staff "+st.Reference] = true
	}
	for _, sv := range old.Services {
		if !refs["service "+sv.Reference] {
			return true
		}
	}
	for _, st := range old.Staff {
		if !refs["staff "+st.Reference] {
			return true
		}
	}
	return false
}

// inUseProblem is the problem of business i when err says one of its
// services or staff members the file leaves out still has bookings.
func inUseProblem(i int, err error) (Problem, bool) {
	var inUse *store.InUseError
	if !errors.As(err, &inUse) {
		return Problem{}, false
	}
	return Problem{Path: fmt.Sprintf("businesses[%d]", i),
		Message: fmt.Sprintf("%s %q still has bookings; keep it in the file, or cancel its bookings first", inUse.Kind, inUse.Reference)}, true
}

// stopped is the error of an import that stopped at business i of n: it
// says how many were written before, and that importing again completes it.
func stopped(err error, i, n int) error {
	if i == 0 {
		return err
	}
	note := fmt.Sprintf("the import stopped there: the %d business(es) before it of %d were written, and importing the file again completes it", i, n)
	if ps, ok := ProblemsOf(err); ok {
		ps = slices.Clone(ps)
		for j := range ps {
			ps[j].Message += " (" + note + ")"
		}
		return invalidInput(ps...)
	}
	return fmt.Errorf("%w (%s)", err, note)
}

// importBusiness writes business i of a validated file, with its audit
// event, in one transaction.
func (s *Service) importBusiness(ctx context.Context, a Actor, i int, c store.Catalog) error {
	ref := c.Business.Reference
	return s.inTx(ctx, func(tx Tx) error {
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
			if p, ok := inUseProblem(i, err); ok {
				return invalidInput(p)
			}
			return fmt.Errorf("admin: import business %q: %w", ref, err)
		}
		after, err := catalogJSON(saved)
		if err != nil {
			return err
		}
		return s.audit(ctx, tx, a, "catalog.import", ref, before, after)
	})
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
		if c.Credentials, err = s.store.ListCredentials(ctx, b.ID); err != nil {
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
