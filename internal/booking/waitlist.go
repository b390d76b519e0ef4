package booking

// The waitlist and callback requests (docs/reference.md §16): the engine's
// part is what needs the catalog — checking a waitlist request and a
// callback's business, and deciding which waiting person a freed slot is
// offered to (SlotFreed). The protocol around them (summary, confirmation,
// idempotency, Activity, notifications) is internal/mutation's.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// DefaultOfferMinutes is how long a freed slot is held for the person it
// is offered to, unless the engine is told otherwise (SetOfferMinutes).
const DefaultOfferMinutes = 30

// SetOfferMinutes sets how long an offer holds its slot (≤ 0: the default).
// Call it before the engine is used.
func (s *Service) SetOfferMinutes(n int) {
	if n <= 0 {
		n = DefaultOfferMinutes
	}
	s.offerMinutes = n
}

func (s *Service) offerHold() time.Duration {
	if s.offerMinutes <= 0 {
		return DefaultOfferMinutes * time.Minute
	}
	return time.Duration(s.offerMinutes) * time.Minute
}

// ---- callback requests ----

// CallbackRequest asks a business to call the person back.
type CallbackRequest struct {
	AccountID, LinkID, ClientID string
	BusinessRef                 string
	Topic                       string
	PreferredTimes              string
	Notes                       string
}

// CallbackFacts are what a callback request's summary shows.
type CallbackFacts struct {
	BusinessReference string
	BusinessName      string
	BusinessAddress   string
	Topic             string
	PreferredTimes    string
	Notes             string
	// ContactEmail is the person's verified address, which the business
	// will use: never an address the agent wrote.
	ContactEmail string
}

// CallbackPlan is a checked callback request, ready to write.
type CallbackPlan struct {
	Request  CallbackRequest
	Facts    CallbackFacts
	Business store.Business
}

// MaxTopic is the longest callback topic, in characters.
const MaxTopic = 200

// PlanCallback checks a callback request: the business exists and takes
// requests through agents; the texts are within their limits. It writes
// nothing. email is the person's verified address.
func (s *Service) PlanCallback(ctx context.Context, r CallbackRequest, email string) (CallbackPlan, error) {
	e, err := s.entryByRef(ctx, r.BusinessRef)
	if err != nil {
		return CallbackPlan{}, err
	}
	b := e.cat.Business
	if !b.AgentBooking {
		err := newErr(problem.CodeBusinessNotBookable, "%s does not take requests through agents. The person can contact the business directly%s.", b.Name, urlHint(b.BookingURL))
		err.BookingURL = b.BookingURL
		return CallbackPlan{}, err
	}
	topic := strings.TrimSpace(r.Topic)
	if topic == "" {
		return CallbackPlan{}, fieldErr(problem.CodeInvalidArgument, "topic", "topic is required: in a few words, what the person wants to talk about (for example \"a quote for a kitchen repaint\").")
	}
	if n := len([]rune(topic)); n > MaxTopic {
		return CallbackPlan{}, fieldErr(problem.CodeInvalidArgument, "topic", "topic is %d characters; keep it to %d and put details in notes.", n, MaxTopic)
	}
	if email == "" {
		return CallbackPlan{}, newErr(problem.CodeInvalidArgument, "The person's account has no e-mail address the business could use. The person must contact the business directly.")
	}
	r.Topic = topic
	return CallbackPlan{Request: r, Business: b, Facts: CallbackFacts{BusinessReference: b.Reference, BusinessName: b.Name,
		BusinessAddress: b.Address, Topic: topic, PreferredTimes: r.PreferredTimes, Notes: r.Notes, ContactEmail: email}}, nil
}

// CallbackTx is what WriteCallback writes through.
type CallbackTx interface {
	InsertCallbackRequest(ctx context.Context, r store.CallbackRequest) error
}

// WriteCallback stores a planned callback request, open, through tx.
func (s *Service) WriteCallback(ctx context.Context, tx CallbackTx, p CallbackPlan) (store.CallbackRequest, error) {
	r := store.CallbackRequest{BusinessID: p.Business.ID, AccountID: p.Request.AccountID, LinkID: p.Request.LinkID,
		ClientID: p.Request.ClientID, Topic: p.Request.Topic, PreferredTimes: p.Request.PreferredTimes, Notes: p.Request.Notes,
		Status: store.CallbackOpen, CreatedAt: s.now()}
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		r.ID, r.Reference = store.NewID("cbr"), "CB-"+NewReference()
		if err = tx.InsertCallbackRequest(ctx, r); !errors.Is(err, store.ErrAlreadyExists) {
			break
		}
	}
	if err != nil {
		return store.CallbackRequest{}, fmt.Errorf("insert callback request: %w", err)
	}
	return r, nil
}

// ---- joining the waitlist ----

// WaitlistRequest asks to wait for a service.
type WaitlistRequest struct {
	AccountID, LinkID string
	BusinessRef       string
	ServiceRef        string
	StaffRef          string // with_staff_reference; empty: anyone who performs it
	FromDate, ToDate  string // YYYY-MM-DD, local, inclusive
	Earliest, Latest  string // HH:MM, local; empty: the whole day
}

// WaitlistFacts are what joining's summary shows.
type WaitlistFacts struct {
	BusinessReference string
	BusinessName      string
	BusinessAddress   string
	ServiceReference  string
	ServiceName       string
	DurationMinutes   int
	PriceCents        int64
	Currency          string
	StaffReference    string // empty: anyone
	StaffName         string
	TimeZone          string
	FromDate, ToDate  string
	Earliest, Latest  string // HH:MM
	OfferMinutes      int
}

// WaitlistPlan is a checked waitlist request, ready to write.
type WaitlistPlan struct {
	Request WaitlistRequest
	Facts   WaitlistFacts
	Entry   store.WaitlistEntry // without id and reference
}

// clockTime parses HH:MM (24:00 allowed for the end of the day) into
// minutes after midnight.
func clockTime(field, v string, def int) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	bad := fieldErr(problem.CodeInvalidTime, field, "%s must be a local time of day HH:MM on the 24-hour clock, for example 09:30 or 17:00.", field)
	h, m, ok := strings.Cut(v, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, bad
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh > 24 || (hh == 24 && mm != 0) {
		return 0, bad
	}
	return hh*60 + mm, nil
}

func hhmm(min int) string { return fmt.Sprintf("%02d:%02d", min/60, min%60) }

// PlanWaitlist checks a waitlist request against the catalog and the
// business's booking window; it writes nothing.
func (s *Service) PlanWaitlist(ctx context.Context, r WaitlistRequest) (WaitlistPlan, error) {
	e, err := s.entryByRef(ctx, r.BusinessRef)
	if err != nil {
		return WaitlistPlan{}, err
	}
	if err := e.bookable(); err != nil {
		return WaitlistPlan{}, err
	}
	sv, err := e.service(r.ServiceRef)
	if err != nil {
		return WaitlistPlan{}, err
	}
	var st *store.Staff
	if strings.TrimSpace(r.StaffRef) != "" {
		if st, err = e.staff(r.StaffRef, "with_staff_reference", sv); err != nil {
			return WaitlistPlan{}, err
		}
	}
	from, ok := parseDate(strings.TrimSpace(r.FromDate))
	if !ok {
		return WaitlistPlan{}, fieldErr(problem.CodeInvalidTime, "from_date", "from_date must be a calendar date YYYY-MM-DD in the business's time zone (%s).", e.cat.Business.TimeZone)
	}
	to, ok := parseDate(strings.TrimSpace(r.ToDate))
	if !ok {
		return WaitlistPlan{}, fieldErr(problem.CodeInvalidTime, "to_date", "to_date must be a calendar date YYYY-MM-DD in the business's time zone (%s).", e.cat.Business.TimeZone)
	}
	if to.String() < from.String() {
		return WaitlistPlan{}, fieldErr(problem.CodeInvalidArgument, "to_date", "to_date (%s) is before from_date (%s); the window runs from from_date to to_date, both included.", to, from)
	}
	now := s.now()
	today := dateOf(now.In(e.loc))
	if from.String() < today.String() {
		return WaitlistPlan{}, fieldErr(problem.CodeInThePast, "from_date", "from_date %s is in the past (today is %s at %s). Ask the person for dates from today on.", from, today, e.cat.Business.Name)
	}
	rl := e.rulesAt(now)
	lastDay := dateOf(rl.latest.In(e.loc))
	if to.String() > lastDay.String() {
		return WaitlistPlan{}, fieldErr(problem.CodeBeyondHorizon, "to_date", "%s takes bookings only up to %s (its booking horizon); a waitlist window ending %s could never be offered a slot after that. Ask the person for dates up to %s.", e.cat.Business.Name, lastDay, to, lastDay)
	}
	earliest, err := clockTime("earliest_local_time", r.Earliest, 0)
	if err != nil {
		return WaitlistPlan{}, err
	}
	latest, err := clockTime("latest_local_time", r.Latest, 24*60)
	if err != nil {
		return WaitlistPlan{}, err
	}
	if latest-earliest < sv.DurationMinutes {
		return WaitlistPlan{}, fieldErr(problem.CodeInvalidArgument, "latest_local_time", "The time of day from %s to %s is shorter than %s (%d minutes); widen it.", hhmm(earliest), hhmm(latest), sv.Name, sv.DurationMinutes)
	}
	f := WaitlistFacts{BusinessReference: e.cat.Business.Reference, BusinessName: e.cat.Business.Name,
		BusinessAddress: e.cat.Business.Address, ServiceReference: sv.Reference, ServiceName: sv.Name,
		DurationMinutes: sv.DurationMinutes, PriceCents: sv.PriceCents, Currency: sv.Currency,
		TimeZone: e.cat.Business.TimeZone, FromDate: from.String(), ToDate: to.String(),
		Earliest: hhmm(earliest), Latest: hhmm(latest), OfferMinutes: int(s.offerHold() / time.Minute)}
	ent := store.WaitlistEntry{AccountID: r.AccountID, LinkID: r.LinkID, BusinessID: e.cat.Business.ID, ServiceID: sv.ID,
		FromDate: f.FromDate, ToDate: f.ToDate, EarliestMin: earliest, LatestMin: latest, Status: store.WaitlistWaiting}
	if st != nil {
		f.StaffReference, f.StaffName, ent.StaffID = st.Reference, st.Name, st.ID
	}
	return WaitlistPlan{Request: r, Facts: f, Entry: ent}, nil
}

// WaitlistTx is what JoinWaitlist writes through.
type WaitlistTx interface {
	InsertWaitlistEntry(ctx context.Context, e store.WaitlistEntry) error
}

// JoinWaitlist writes a planned entry, waiting, through tx.
func (s *Service) JoinWaitlist(ctx context.Context, tx WaitlistTx, p WaitlistPlan) (store.WaitlistEntry, error) {
	ent := p.Entry
	now := s.now()
	ent.CreatedAt, ent.UpdatedAt = now, now
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		ent.ID, ent.Reference = store.NewID("wle"), "WL-"+NewReference()
		if err = tx.InsertWaitlistEntry(ctx, ent); !errors.Is(err, store.ErrAlreadyExists) {
			break
		}
	}
	if err != nil {
		return store.WaitlistEntry{}, fmt.Errorf("insert waitlist entry: %w", err)
	}
	return ent, nil
}

// WaitlistView is a waitlist entry as the person sees it
// (search_my_bookings status=waitlisted, My bookings).
type WaitlistView struct {
	Reference         string     `json:"waitlist_reference"`
	Status            string     `json:"status" jsonschema:"waiting, or offered: a slot is held for the person (see offer)"`
	BusinessReference string     `json:"business_reference"`
	BusinessName      string     `json:"business_name"`
	ServiceReference  string     `json:"service_reference"`
	ServiceName       string     `json:"service_name"`
	StaffReference    string     `json:"staff_reference,omitempty" jsonschema:"only this staff member; absent: anyone who performs the service"`
	StaffName         string     `json:"staff_name,omitempty"`
	TimeZone          string     `json:"timezone"`
	FromDate          string     `json:"from_local_date"`
	ToDate            string     `json:"to_local_date"`
	Earliest          string     `json:"earliest_local_time"`
	Latest            string     `json:"latest_local_time"`
	Offer             *OfferView `json:"offer,omitempty"`
}

// OfferView is a live offer: the slot held for the person.
type OfferView struct {
	Reference        string    `json:"offer_reference"`
	ServiceReference string    `json:"service_reference"`
	StaffReference   string    `json:"staff_reference"`
	StaffName        string    `json:"staff_name"`
	StartsAt         time.Time `json:"starts_at"`
	EndsAt           time.Time `json:"ends_at"`
	HeldUntil        time.Time `json:"held_until"`
}

// WaitlistViewOf renders an entry from the facts its plan resolved.
func WaitlistViewOf(f WaitlistFacts, e store.WaitlistEntry) WaitlistView {
	return WaitlistView{Reference: e.Reference, Status: e.Status, BusinessReference: f.BusinessReference,
		BusinessName: f.BusinessName, ServiceReference: f.ServiceReference, ServiceName: f.ServiceName,
		StaffReference: f.StaffReference, StaffName: f.StaffName, TimeZone: f.TimeZone, FromDate: f.FromDate,
		ToDate: f.ToDate, Earliest: f.Earliest, Latest: f.Latest}
}

// waitlistView renders a stored entry with its catalog (and its live offer).
func (e *catalogEntry) waitlistView(w store.WaitlistEntry, o *store.WaitlistOffer) WaitlistView {
	f := WaitlistFacts{BusinessReference: e.cat.Business.Reference, BusinessName: e.cat.Business.Name,
		TimeZone: e.cat.Business.TimeZone, FromDate: w.FromDate, ToDate: w.ToDate, Earliest: hhmm(w.EarliestMin), Latest: hhmm(w.LatestMin)}
	if sv := e.svcByID[w.ServiceID]; sv != nil {
		f.ServiceReference, f.ServiceName = sv.Reference, sv.Name
	}
	if st := e.stByID[w.StaffID]; st != nil {
		f.StaffReference, f.StaffName = st.Reference, st.Name
	}
	v := WaitlistViewOf(f, w)
	if o != nil {
		ov := &OfferView{Reference: o.Reference, StartsAt: o.StartsAt.In(e.loc), EndsAt: o.EndsAt.In(e.loc), HeldUntil: o.HeldUntil.In(e.loc)}
		if sv := e.svcByID[o.ServiceID]; sv != nil {
			ov.ServiceReference = sv.Reference
		}
		if st := e.stByID[o.StaffID]; st != nil {
			ov.StaffReference, ov.StaffName = st.Reference, st.Name
		}
		v.Offer = ov
	}
	return v
}

// WaitlistPage is one page of a person's waitlist entries.
type WaitlistPage struct {
	Results    []WaitlistView `json:"results"`
	HasMore    bool           `json:"has_more"`
	NextOffset *int           `json:"next_offset"`
}

// MyWaitlist lists a person's entries that are waiting or offered, oldest
// first, each with its live offer.
func (s *Service) MyWaitlist(ctx context.Context, accountID string, limit, offset int) (WaitlistPage, error) {
	limit, offset, err := page(limit, offset)
	if err != nil {
		return WaitlistPage{}, err
	}
	rows, err := s.store.ListAccountWaitlist(ctx, accountID, limit, offset)
	if err != nil {
		return WaitlistPage{}, fmt.Errorf("list waitlist: %w", err)
	}
	more, next := nextOffset(len(rows), limit, offset)
	if more {
		rows = rows[:limit]
	}
	out := WaitlistPage{Results: []WaitlistView{}, HasMore: more, NextOffset: next}
	now := s.now()
	for _, w := range rows {
		e, err := s.entryByID(ctx, w.BusinessID)
		if err != nil {
			return WaitlistPage{}, err
		}
		var live *store.WaitlistOffer
		if w.Status == store.WaitlistOffered {
			if o, err := s.store.LiveOfferOf(ctx, w.ID, now); err == nil {
				live = &o
			}
		}
		out.Results = append(out.Results, e.waitlistView(w, live))
	}
	return out, nil
}
