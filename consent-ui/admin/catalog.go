package adminui

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/problem"
)

// The businesses page and the catalog page: import and export.

func (h *Handler) getBusinesses(w http.ResponseWriter, r *http.Request, p *page) {
	bs, err := h.svc.ListBusinesses(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p.Title, p.Nav, p.Data, p.Notice = "Businesses", "businesses", bs, notice(r)
	h.render(w, r, http.StatusOK, "businesses", p)
}

func (h *Handler) postAgentBooking(w http.ResponseWriter, r *http.Request, p *page) {
	var on bool
	switch r.PostFormValue("enabled") {
	case "on":
		on = true
	case "off":
	default:
		h.ui.RenderError(w, r, http.StatusBadRequest, "Not possible", "The form did not say whether to turn agent booking on or off.")
		return
	}
	if _, err := h.svc.SetAgentBooking(r.Context(), p.Actor, r.PathValue("ref"), on); err != nil {
		h.fail(w, r, err)
		return
	}
	done := "agent-off"
	if on {
		done = "agent-on"
	}
	http.Redirect(w, r, "/admin/businesses?done="+done, http.StatusSeeOther)
}

// ---- catalog ----

type catalogForm struct {
	Content, Format string
}

func (h *Handler) getCatalog(w http.ResponseWriter, r *http.Request, p *page) {
	p.Title, p.Nav, p.Notice = "Catalog", "catalog", notice(r)
	h.render(w, r, http.StatusOK, "catalog", p)
}

func (h *Handler) postCatalog(w http.ResponseWriter, r *http.Request, p *page) {
	format := catalogfile.NormalizeFormat(r.PostFormValue("format"))
	content := r.PostFormValue("content")
	data := []byte(content)
	if f, fh, err := r.FormFile("file"); err == nil {
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, catalogfile.MaxFileBytes+1))
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		if len(bytes.TrimSpace(b)) > 0 {
			data, content = b, ""
			if ext := catalogfile.NormalizeFormat(strings.TrimPrefix(path.Ext(fh.Filename), ".")); ext != "" {
				format = ext
			}
		}
	}
	if format == "" {
		format = catalogfile.FormatYAML
	}
	p.Title, p.Nav = "Catalog", "catalog"
	if len(bytes.TrimSpace(data)) == 0 {
		p.Problems = []admin.Problem{{Message: "choose a catalog file or paste one"}}
		h.render(w, r, http.StatusBadRequest, "catalog", p)
		return
	}
	res, err := h.svc.ImportCatalogReport(r.Context(), p.Actor, data, format)
	if probs, ok := problemsOf(err); ok {
		p.Problems, p.Data = probs, catalogForm{Content: content, Format: format}
		h.render(w, r, http.StatusBadRequest, "catalog", p)
		return
	}
	if e, ok := problem.As(err); ok && e.Code == problem.CodeRequestTooLarge {
		// Over catalogfile.MaxBusinesses or MaxFileBytes: nothing was written.
		p.Problems, p.Data = []admin.Problem{{Path: e.Field, Message: e.Message}}, catalogForm{Format: format}
		h.render(w, r, http.StatusRequestEntityTooLarge, "catalog", p)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p.Notice = fmt.Sprintf("Imported %d business(es): %s.", len(res.Imported), strings.Join(res.Imported, ", "))
	if len(res.Warnings) > 0 {
		p.Warnings = res.Warnings
	}
	h.render(w, r, http.StatusOK, "catalog", p)
}

func (h *Handler) getCatalogExport(w http.ResponseWriter, r *http.Request, p *page) {
	format := catalogfile.NormalizeFormat(r.URL.Query().Get("format"))
	if format == "" {
		format = catalogfile.FormatYAML
	}
	data, err := h.svc.ExportCatalog(r.Context(), p.Actor, format)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", catalogfile.ContentType(format))
	w.Header().Set("Content-Disposition", "attachment; filename=linkslot-catalog."+format)
	_, _ = w.Write(data)
}
