package adminapi

import (
	"fmt"
	"io"
	"net/http"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/problem"
)

// The catalog and the businesses: /admin/api/catalog and /admin/api/businesses.

func (a *api) importCatalog(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	format := catalogfile.NormalizeFormat(r.Header.Get("Content-Type"))
	if format == "" {
		writeError(w, http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType,
			"send the catalog file as application/json or application/yaml", nil)
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, catalogfile.MaxFileBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, problem.CodeTooLarge, fmt.Sprintf("the catalog file must be at most %d bytes", catalogfile.MaxFileBytes), nil)
		return
	}
	res, err := a.svc.ImportCatalogReport(r.Context(), actor, data, format)
	if err != nil {
		if ps, ok := admin.ProblemsOf(err); ok {
			msg := fmt.Sprintf("the catalog file has %d problem(s); nothing was imported", len(ps))
			if len(res.Imported) > 0 {
				msg = fmt.Sprintf("the import stopped at a business the database refused; %d business(es) before it were imported", len(res.Imported))
			}
			writeError(w, http.StatusBadRequest, problem.CodeInvalidCatalog, msg, ps)
			return
		}
		if e, ok := problem.As(err); ok && e.Code == problem.CodeRequestTooLarge {
			// Over catalogfile.MaxBusinesses or MaxFileBytes: nothing was
			// written (docs/reference.md §6).
			writeError(w, http.StatusRequestEntityTooLarge, problem.CodeRequestTooLarge, e.Message,
				[]admin.Problem{{Path: e.Field, Message: e.Message}})
			return
		}
		if len(res.Imported) > 0 {
			a.log.ErrorContext(r.Context(), "admin api", "method", r.Method, "path", r.URL.Path, "err", err)
			writeError(w, http.StatusInternalServerError, problem.CodeServerError,
				fmt.Sprintf("the import stopped after %d business(es), which were written; send the same file again to complete it", len(res.Imported)), nil)
			return
		}
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res) // {"imported": [...], "warnings": [{"path", "message"}]}
}

func (a *api) exportCatalog(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	format := catalogfile.NormalizeFormat(r.URL.Query().Get("format"))
	if r.URL.Query().Get("format") == "" {
		format = catalogfile.FormatJSON
	}
	if format == "" {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "format must be json or yaml", nil)
		return
	}
	data, err := a.svc.ExportCatalog(r.Context(), actor, format)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", catalogfile.ContentType(format))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

func (a *api) listBusinesses(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	bs, err := a.svc.ListBusinesses(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"businesses": bs})
}

func (a *api) agentBooking(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b struct {
		Enabled *bool `json:"enabled"`
	}
	if !decode(w, r, &b) {
		return
	}
	if b.Enabled == nil {
		writeError(w, http.StatusBadRequest, problem.CodeInvalidRequest, "the request was refused; see problems",
			[]admin.Problem{{Path: "enabled", Message: "is required (true or false)"}})
		return
	}
	biz, err := a.svc.SetAgentBooking(r.Context(), actor, r.PathValue("ref"), *b.Enabled)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"business": biz})
}

// Members of a business (docs/reference.md §16).

func (a *api) listMembers(w http.ResponseWriter, r *http.Request, _ admin.Actor) {
	ms, err := a.svc.ListMembers(r.Context(), r.PathValue("ref"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"members": ms})
}

func (a *api) addMember(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	var b struct {
		Email string `json:"email"`
		Staff string `json:"staff"`
	}
	if !decode(w, r, &b) {
		return
	}
	m, err := a.svc.AddMember(r.Context(), actor, r.PathValue("ref"), b.Email, b.Staff)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"member": m})
}

func (a *api) removeMember(w http.ResponseWriter, r *http.Request, actor admin.Actor) {
	if err := a.svc.RemoveMember(r.Context(), actor, r.PathValue("ref"), r.PathValue("email")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
