package booking

import (
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// BusinessSummary is one business search result.
type BusinessSummary struct {
	Reference   string `json:"business_reference"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Category    string `json:"category"`
	City        string `json:"city"`
	Address     string `json:"address"`
	TimeZone    string `json:"timezone"`
}

// BusinessPage is one page of business search results.
type BusinessPage struct {
	Results    []BusinessSummary `json:"results"`
	HasMore    bool              `json:"has_more"`
	NextOffset *int              `json:"next_offset"`
}

// BusinessView is a business as the catalog answer shows it.
type BusinessView struct {
	Reference                 string `json:"business_reference"`
	Name                      string `json:"name"`
	Description               string `json:"description,omitempty"`
	Category                  string `json:"category"`
	City                      string `json:"city"`
	Address                   string `json:"address"`
	TimeZone                  string `json:"timezone"`
	Bookable                  bool   `json:"bookable_by_agent"` // agent booking on and an appointment business
	MinNoticeMinutes          int    `json:"minimum_notice_minutes"`
	HorizonDays               int    `json:"booking_horizon_days"`
	SlotIntervalMinutes       int    `json:"slot_interval_minutes"`
	CancellationWindowMinutes int    `json:"cancellation_window_minutes"`
	CancellationFeeCents      int64  `json:"cancellation_fee_cents"`
	Currency                  string `json:"currency"`
	CancellationPolicy        string `json:"cancellation_policy"`
	PrivacyNotice             string `json:"privacy_notice,omitempty"`
	BookingURL                string `json:"booking_url,omitempty"`
	// ConfirmationWindowMinutes is how long the business takes at most to
	// answer a booking of a service that requires its confirmation.
	ConfirmationWindowMinutes int `json:"confirmation_window_minutes"`
	// Credentials are the business's self-reported licenses, insurance and
	// certifications (absent when it lists none).
	Credentials *SelfReportedCredentials `json:"self_reported_credentials,omitempty"`
}

// ServiceView is one service of a catalog.
type ServiceView struct {
	Reference       string `json:"service_reference"`
	Name            string `json:"name"`
	Description     string `json:"description,omitempty"`
	DurationMinutes int    `json:"duration_minutes"`
	PriceCents      int64  `json:"price_cents"`
	Currency        string `json:"currency"`
	DepositRequired bool   `json:"deposit_required"`
	// RequiresConfirmation: a booking is pending until the business
	// confirms it.
	RequiresConfirmation bool     `json:"requires_confirmation"`
	BufferBeforeMinutes  int      `json:"buffer_before_minutes"`
	BufferAfterMinutes   int      `json:"buffer_after_minutes"`
	StaffReferences      []string `json:"staff_references"`
}

// StaffView is one staff member of a catalog.
type StaffView struct {
	Reference         string   `json:"staff_reference"`
	Name              string   `json:"name"`
	ServiceReferences []string `json:"service_references"`
}

// CatalogView is what check_business_availability answers without a service.
type CatalogView struct {
	Business BusinessView  `json:"business"`
	Services []ServiceView `json:"services"`
	Staff    []StaffView   `json:"staff"`
}

// AvailabilityQuery asks for the open times of a service on one local date.
type AvailabilityQuery struct {
	BusinessRef string
	ServiceRef  string
	LocalDate   string // YYYY-MM-DD in the business's time zone
	StaffRef    string // optional: only this staff member
}

// Slot is one bookable time. Both instants are in the business's zone, so
// they marshal as RFC 3339 with the business's offset at that instant.
type Slot struct {
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
}

// StaffSlots are the open times of one staff member.
type StaffSlots struct {
	StaffReference string `json:"staff_reference"`
	StaffName      string `json:"staff_name"`
	Slots          []Slot `json:"slots"`
}

// Availability is the open times of one service on one local date.
type Availability struct {
	BusinessReference string       `json:"business_reference"`
	BusinessName      string       `json:"business_name"`
	ServiceReference  string       `json:"service_reference"`
	ServiceName       string       `json:"service_name"`
	DurationMinutes   int          `json:"duration_minutes"`
	TimeZone          string       `json:"timezone"`
	LocalDate         string       `json:"local_date"`
	BookingReference  string       `json:"booking_reference,omitempty"` // set by RescheduleAvailability
	Staff             []StaffSlots `json:"staff"`
}

// BookingView is a booking as its owner sees it. Instants are in the
// business's zone. Record is the stored row (ids, link, version) for the
// grant and activity layers; it is never shown to a client.
type BookingView struct {
	Reference            string     `json:"booking_reference"`
	Status               string     `json:"status"`
	Version              int        `json:"version"`
	BusinessReference    string     `json:"business_reference"`
	BusinessName         string     `json:"business_name"`
	ServiceReference     string     `json:"service_reference"`
	ServiceName          string     `json:"service_name"`
	StaffReference       string     `json:"staff_reference"`
	StaffName            string     `json:"staff_name"`
	TimeZone             string     `json:"timezone"`
	StartsAt             time.Time  `json:"starts_at"`
	EndsAt               time.Time  `json:"ends_at"`
	PriceCents           int64      `json:"price_cents"`
	Currency             string     `json:"currency"`
	Notes                string     `json:"notes,omitempty"`
	PaymentState         string     `json:"payment_state"`
	CancellationPolicy   string     `json:"cancellation_policy,omitempty"`
	CancelReason         string     `json:"cancel_reason,omitempty"`
	CancellationFeeCents int64      `json:"cancellation_fee_cents,omitempty"`
	CancelledAt          *time.Time `json:"cancelled_at,omitempty"`
	// RespondBy: a pending booking is declined at this instant unless the
	// business answers first.
	RespondBy *time.Time `json:"respond_by,omitempty"`
	CreatedAt time.Time  `json:"created_at"`

	Record store.Booking `json:"-"`
}

// BookingPage is one page of a person's bookings.
type BookingPage struct {
	Results    []BookingView `json:"results"`
	HasMore    bool          `json:"has_more"`
	NextOffset *int          `json:"next_offset"`
}

// CreateRequest asks to book a service.
type CreateRequest struct {
	AccountID   string
	LinkID      string
	BusinessRef string
	ServiceRef  string
	StaffRef    string // empty: the first staff member (by reference) free at StartsAt
	StartsAt    time.Time
	Notes       string // at most MaxNotes characters; visible to the business
	// OfferRef books the slot a waitlist offer holds for the person
	// (offer_reference); empty: an ordinary booking.
	OfferRef string
}

// RescheduleRequest asks to move a booking.
type RescheduleRequest struct {
	AccountID   string
	BookingRef  string
	NewStartsAt time.Time
	StaffRef    string // empty: keep the booking's staff member
}

// CancelRequest asks to cancel a booking.
type CancelRequest struct {
	AccountID  string
	BookingRef string
	Reason     string
}

// Facts is everything a human confirmation summary shows. Text renders it;
// the text is deterministic, so comparing two renderings detects a changed
// price, staff, policy or time.
type Facts struct {
	Action                    string // "create", "reschedule", "cancel", or a business action (BusinessConfirm, …)
	BookingReference          string // empty for create
	BookingVersion            int    // current version (0 for create)
	BusinessReference         string
	BusinessName              string
	BusinessAddress           string
	ServiceReference          string
	ServiceName               string
	StaffReference            string
	StaffName                 string
	TimeZone                  string
	StartsAt                  time.Time // in TimeZone
	EndsAt                    time.Time // in TimeZone
	PreviousStaffName         string    // reschedule
	PreviousStartsAt          time.Time // reschedule, in TimeZone
	PreviousEndsAt            time.Time // reschedule, in TimeZone
	PriceCents                int64
	Currency                  string
	CancellationPolicy        string
	CancellationWindowMinutes int
	CancellationFeeCents      int64 // the business's fee for a late cancellation
	FeeNow                    int64 // cancel: the fee this cancellation costs
	Notes                     string
	PrivacyNotice             string // create
	Reason                    string // cancel, decline
	// RequiresConfirmation (create): the booking is pending until the
	// business answers, within ConfirmationWindow and before the start.
	RequiresConfirmation bool
	ConfirmationWindow   time.Duration
	// Actor (business actions): who acted for the business, as the person
	// is told.
	Actor string
}

// CreatePlan is a validated create, ready to execute.
type CreatePlan struct {
	Request CreateRequest
	Facts   Facts
	Booking store.Booking // the row Create will insert (without id/reference)
	// Offer is the waitlist offer the booking uses (OfferRef), or nil.
	Offer *store.WaitlistOffer

	entry *catalogEntry
}

// ReschedulePlan is a validated move, ready to execute.
type ReschedulePlan struct {
	Request RescheduleRequest
	Facts   Facts
	Current store.Booking // as read when planning; Version is re-checked
	Next    store.Booking // the row after the move

	entry *catalogEntry
}

// CancelPlan is a validated cancellation, ready to execute.
type CancelPlan struct {
	Request          CancelRequest
	Facts            Facts
	Current          store.Booking
	AlreadyCancelled bool // the booking is already cancelled: answer success with already_cancelled:true
	FeeCents         int64

	entry *catalogEntry
}

// Business is the business the plan books at, as its catalog was read.
func (p CreatePlan) Business() store.Business { return p.entry.business() }

// Business is the booking's business, as its catalog was read.
func (p ReschedulePlan) Business() store.Business { return p.entry.business() }

// Business is the booking's business, as its catalog was read.
func (p CancelPlan) Business() store.Business { return p.entry.business() }

func (e *catalogEntry) business() store.Business {
	if e == nil {
		return store.Business{}
	}
	return e.cat.Business
}
