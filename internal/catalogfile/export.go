package catalogfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/linkslot/linkslot/internal/store"
)

// The file's shape, used to write it; Parse reads the same keys.
type fileDoc struct {
	Businesses []fileBusiness `json:"businesses" yaml:"businesses"`
}

type fileBusiness struct {
	Reference    string           `json:"reference" yaml:"reference"`
	Name         string           `json:"name" yaml:"name"`
	Description  string           `json:"description,omitempty" yaml:"description,omitempty"`
	Category     string           `json:"category" yaml:"category"`
	City         string           `json:"city,omitempty" yaml:"city,omitempty"`
	Address      string           `json:"address,omitempty" yaml:"address,omitempty"`
	TimeZone     string           `json:"timezone" yaml:"timezone"`
	Currency     string           `json:"currency" yaml:"currency"`
	AgentBooking bool             `json:"agent_booking" yaml:"agent_booking"`
	BookingURL   string           `json:"booking_url,omitempty" yaml:"booking_url,omitempty"`
	ContactEmail string           `json:"contact_email,omitempty" yaml:"contact_email,omitempty"`
	Policies     filePolicies     `json:"policies" yaml:"policies"`
	Hours        *fileHours       `json:"hours,omitempty" yaml:"hours,omitempty"`
	Services     []fileService    `json:"services" yaml:"services"`
	Staff        []fileStaff      `json:"staff" yaml:"staff"`
	Credentials  []fileCredential `json:"credentials,omitempty" yaml:"credentials,omitempty"`
}

type fileCredential struct {
	Kind       string `json:"kind" yaml:"kind"`
	Name       string `json:"name" yaml:"name"`
	Issuer     string `json:"issuer,omitempty" yaml:"issuer,omitempty"`
	Number     string `json:"number,omitempty" yaml:"number,omitempty"`
	ValidUntil string `json:"valid_until,omitempty" yaml:"valid_until,omitempty"`
}

type filePolicies struct {
	MinNoticeMinutes          int    `json:"min_notice_minutes" yaml:"min_notice_minutes"`
	HorizonDays               int    `json:"horizon_days" yaml:"horizon_days"`
	SlotIntervalMinutes       int    `json:"slot_interval_minutes" yaml:"slot_interval_minutes"`
	CancellationWindowMinutes int    `json:"cancellation_window_minutes" yaml:"cancellation_window_minutes"`
	CancellationFeeCents      int64  `json:"cancellation_fee_cents" yaml:"cancellation_fee_cents"`
	CancellationPolicy        string `json:"cancellation_policy,omitempty" yaml:"cancellation_policy,omitempty"`
	PrivacyNotice             string `json:"privacy_notice,omitempty" yaml:"privacy_notice,omitempty"`
	ConfirmationWindowMinutes int    `json:"confirmation_window_minutes,omitempty" yaml:"confirmation_window_minutes,omitempty"`
}

type fileHours struct {
	Monday    []string `json:"monday,omitempty" yaml:"monday,omitempty,flow"`
	Tuesday   []string `json:"tuesday,omitempty" yaml:"tuesday,omitempty,flow"`
	Wednesday []string `json:"wednesday,omitempty" yaml:"wednesday,omitempty,flow"`
	Thursday  []string `json:"thursday,omitempty" yaml:"thursday,omitempty,flow"`
	Friday    []string `json:"friday,omitempty" yaml:"friday,omitempty,flow"`
	Saturday  []string `json:"saturday,omitempty" yaml:"saturday,omitempty,flow"`
	Sunday    []string `json:"sunday,omitempty" yaml:"sunday,omitempty,flow"`
}

func (h *fileHours) day(d time.Weekday) *[]string {
	return [...]*[]string{&h.Sunday, &h.Monday, &h.Tuesday, &h.Wednesday, &h.Thursday, &h.Friday, &h.Saturday}[d]
}

type fileService struct {
	Reference            string `json:"reference" yaml:"reference"`
	Name                 string `json:"name" yaml:"name"`
	Description          string `json:"description,omitempty" yaml:"description,omitempty"`
	DurationMinutes      int    `json:"duration_minutes" yaml:"duration_minutes"`
	PriceCents           int64  `json:"price_cents" yaml:"price_cents"`
	Currency             string `json:"currency" yaml:"currency"`
	BufferBeforeMinutes  int    `json:"buffer_before_minutes,omitempty" yaml:"buffer_before_minutes,omitempty"`
	BufferAfterMinutes   int    `json:"buffer_after_minutes,omitempty" yaml:"buffer_after_minutes,omitempty"`
	DepositRequired      bool   `json:"deposit_required,omitempty" yaml:"deposit_required,omitempty"`
	RequiresConfirmation bool   `json:"requires_confirmation,omitempty" yaml:"requires_confirmation,omitempty"`
}

type fileStaff struct {
	Reference string        `json:"reference" yaml:"reference"`
	Name      string        `json:"name" yaml:"name"`
	Services  []string      `json:"services" yaml:"services,flow"`
	Hours     *fileHours    `json:"hours,omitempty" yaml:"hours,omitempty"`
	TimeOff   []fileTimeOff `json:"time_off,omitempty" yaml:"time_off,omitempty"`
}

type fileTimeOff struct {
	StartsAt string `json:"starts_at" yaml:"starts_at"`
	EndsAt   string `json:"ends_at" yaml:"ends_at"`
	Reason   string `json:"reason,omitempty" yaml:"reason,omitempty"`
}

// Export writes catalogs as a file in format (json or yaml) that Parse
// reads back to the same catalogs. Catalogs may come from Parse (keyed by
// reference) or from the store (keyed by id). Time off is written as
// instants in the business's zone.
func Export(cats []store.Catalog, format string) ([]byte, error) {
	f := NormalizeFormat(format)
	if f == "" {
		return nil, fmt.Errorf("unknown catalog format %q (want json or yaml)", format)
	}
	doc := fileDoc{Businesses: make([]fileBusiness, 0, len(cats))}
	for _, c := range cats {
		fb, err := exportBusiness(c)
		if err != nil {
			return nil, err
		}
		doc.Businesses = append(doc.Businesses, fb)
	}
	var buf bytes.Buffer
	switch f {
	case FormatJSON:
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
	case FormatYAML:
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

func exportHours(ws []store.HoursWindow) *fileHours {
	if len(ws) == 0 {
		return nil
	}
	h := &fileHours{}
	for _, w := range ws {
		if w.Weekday < time.Sunday || w.Weekday > time.Saturday {
			continue
		}
		d := h.day(w.Weekday)
		*d = append(*d, FormatWindow(w.StartMin, w.EndMin))
	}
	return h
}

func exportBusiness(c store.Catalog) (fileBusiness, error) {
	b := c.Business
	loc, err := loadZone(b.TimeZone)
	if err != nil {
		return fileBusiness{}, fmt.Errorf("business %q: time zone %q: %w", b.Reference, b.TimeZone, err)
	}
	fb := fileBusiness{
		Reference: b.Reference, Name: b.Name, Description: b.Description, Category: b.Category,
		City: b.City, Address: b.Address, TimeZone: b.TimeZone, Currency: b.Currency,
		AgentBooking: b.AgentBooking, BookingURL: b.BookingURL, ContactEmail: b.ContactEmail,
		Policies: filePolicies{
			MinNoticeMinutes: b.MinNoticeMinutes, HorizonDays: b.HorizonDays, SlotIntervalMinutes: b.SlotIntervalMinutes,
			CancellationWindowMinutes: b.CancellationWindowMinutes, CancellationFeeCents: b.CancellationFeeCents,
			CancellationPolicy: b.CancellationPolicy, PrivacyNotice: b.PrivacyNotice,
			ConfirmationWindowMinutes: b.ConfirmationWindowMinutes,
		},
		Hours:    exportHours(c.OpeningHours),
		Services: []fileService{},
		Staff:    []fileStaff{},
	}
	svcRef := map[string]string{}
	for _, s := range c.Services {
		svcRef[s.Reference] = s.Reference
		if s.ID != "" {
			svcRef[s.ID] = s.Reference
		}
		fb.Services = append(fb.Services, fileService{
			Reference: s.Reference, Name: s.Name, Description: s.Description, DurationMinutes: s.DurationMinutes,
			PriceCents: s.PriceCents, Currency: s.Currency, BufferBeforeMinutes: s.BufferBeforeMinutes,
			BufferAfterMinutes: s.BufferAfterMinutes, DepositRequired: s.DepositRequired,
			RequiresConfirmation: s.RequiresConfirmation,
		})
	}
	for _, st := range c.Staff {
		fs := fileStaff{Reference: st.Reference, Name: st.Name, Services: []string{}}
		for _, id := range st.ServiceIDs {
			ref, ok := svcRef[id]
			if !ok {
				return fileBusiness{}, fmt.Errorf("business %q: staff %q performs unknown service %q", b.Reference, st.Reference, id)
			}
			fs.Services = append(fs.Services, ref)
		}
		key := st.Reference
		if _, ok := c.StaffHours[key]; !ok && st.ID != "" {
			key = st.ID
		}
		fs.Hours = exportHours(c.StaffHours[key])
		key = st.Reference
		if _, ok := c.StaffTimeOff[key]; !ok && st.ID != "" {
			key = st.ID
		}
		for _, o := range c.StaffTimeOff[key] {
			fs.TimeOff = append(fs.TimeOff, fileTimeOff{
				StartsAt: instant(o.StartsAt, loc),
				EndsAt:   instant(o.EndsAt, loc),
				Reason:   o.Reason,
			})
		}
		fb.Staff = append(fb.Staff, fs)
	}
	for _, cr := range c.Credentials {
		fb.Credentials = append(fb.Credentials, fileCredential{Kind: cr.Kind, Name: cr.Name, Issuer: cr.Issuer,
			Number: cr.Number, ValidUntil: cr.ValidUntil})
	}
	return fb, nil
}

// instant formats t in the zone, or in UTC when the zone's offset then has
// seconds, which RFC 3339 cannot write.
func instant(t time.Time, loc *time.Location) string {
	if _, off := t.In(loc).Zone(); off%60 != 0 {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return t.In(loc).Format(time.RFC3339Nano)
}
