package store

import (
	"context"
	"time"
)

// Callback request statuses.
const (
	CallbackOpen = "open"
	CallbackDone = "done"
)

// CallbackRequest is a person asking a business, through their agent, to
// call or write back (docs/reference.md §16). The contact details are not
// stored here: they are the account's, read when the request is shown.
type CallbackRequest struct {
	ID             string
	Reference      string
	BusinessID     string
	AccountID      string
	LinkID         string
	ClientID       string
	Topic          string
	PreferredTimes string
	Notes          string
	Status         string // CallbackOpen or CallbackDone
	CreatedAt      time.Time
	DoneAt         *time.Time
	DoneBy         string // who marked it done (an account id)
}

// Callbacks stores callback requests.
type Callbacks interface {
	InsertCallbackRequest(ctx context.Context, r CallbackRequest) error
	// ListCallbackRequests returns up to limit requests of a business with
	// the status (empty: any), oldest first.
	ListCallbackRequests(ctx context.Context, businessID, status string, limit int) ([]CallbackRequest, error)
	// MarkCallbackDone marks an open request of the business done:
	// ErrNotFound when the business has no request with the reference,
	// ErrConflict when it is already done.
	MarkCallbackDone(ctx context.Context, businessID, reference, by string, at time.Time) (CallbackRequest, error)
}

// Waitlist entry statuses.
const (
	WaitlistWaiting = "waiting" // in line for a matching slot
	WaitlistOffered = "offered" // holding a live offer
	WaitlistBooked  = "booked"  // booked an offered slot
	WaitlistLeft    = "left"    // the person left the list
	WaitlistExpired = "expired" // its window has passed
)

// Waitlist offer statuses.
const (
	OfferHeld   = "held"   // the slot is held for the person until HeldUntil
	OfferUsed   = "used"   // booked with the offer
	OfferLapsed = "lapsed" // not used in time; passed on
)

// WaitlistEntry is a person waiting for a service at a business, with one
// staff member or anyone (StaffID empty), between two local dates
// (inclusive, YYYY-MM-DD in the business's zone) and within a time of day
// ([EarliestMin, LatestMin) minutes after local midnight).
type WaitlistEntry struct {
	ID          string
	Reference   string
	AccountID   string
	LinkID      string
	BusinessID  string
	ServiceID   string
	StaffID     string
	FromDate    string
	ToDate      string
	EarliestMin int
	LatestMin   int
	Status      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// WaitlistOffer is a freed slot held for the person of one entry until
// HeldUntil.
type WaitlistOffer struct {
	ID         string
	Reference  string
	EntryID    string
	AccountID  string
	LinkID     string
	BusinessID string
	ServiceID  string
	StaffID    string
	StartsAt   time.Time
	EndsAt     time.Time
	BlockStart time.Time
	BlockEnd   time.Time
	HeldUntil  time.Time
	Status     string
	BookingID  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Live reports whether the offer holds its slot at now.
func (o WaitlistOffer) Live(now time.Time) bool {
	return o.Status == OfferHeld && now.Before(o.HeldUntil)
}

// Waitlist stores waitlist entries and the offers of freed slots.
//
// Holding is decided in the database: HoldSlot takes the staff member's
// lock (PostgreSQL; SQLite's write lock otherwise) and writes the offer
// only when no confirmed booking and no other held offer overlaps it, and
// PostgreSQL's exclusion constraint refuses two overlapping held offers
// whatever else happens. InsertBooking and UpdateBooking refuse (ErrOverlap)
// a confirmed booking of another account over a live offer, under the same
// lock, so a held slot cannot be booked by anyone else.
type Waitlist interface {
	InsertWaitlistEntry(ctx context.Context, e WaitlistEntry) error
	GetWaitlistEntry(ctx context.Context, reference string) (WaitlistEntry, error)
	// ListAccountWaitlist returns up to limit+1 of a person's entries that
	// are waiting or offered, oldest first.
	ListAccountWaitlist(ctx context.Context, accountID string, limit, offset int) ([]WaitlistEntry, error)
	// ListWaitingEntries returns the entries of a business that are
	// waiting, first come first.
	ListWaitingEntries(ctx context.Context, businessID string) ([]WaitlistEntry, error)
	// UpdateWaitlistEntry locks the entry, applies fn and writes it.
	UpdateWaitlistEntry(ctx context.Context, id string, fn func(WaitlistEntry) (WaitlistEntry, error)) (WaitlistEntry, error)
	// HoldSlot writes o (status OfferHeld) and marks its entry offered,
	// when at o.CreatedAt no confirmed booking and no live offer of the
	// staff member overlaps o's blocked span; otherwise ErrOverlap and
	// nothing is written.
	HoldSlot(ctx context.Context, o WaitlistOffer) error
	// WasOffered reports whether the entry was ever offered a slot of the
	// staff member starting at start.
	WasOffered(ctx context.Context, entryID, staffID string, start time.Time) (bool, error)
	GetWaitlistOffer(ctx context.Context, reference string) (WaitlistOffer, error)
	// LiveOfferOf returns the entry's held offer that has not run out at
	// now; ErrNotFound when there is none.
	LiveOfferOf(ctx context.Context, entryID string, now time.Time) (WaitlistOffer, error)
	// UseWaitlistOffer marks a live offer used by bookingID and its entry
	// booked: ErrConflict when the offer is no longer held at now.
	UseWaitlistOffer(ctx context.Context, id, bookingID string, now time.Time) (WaitlistOffer, error)
	// LapseWaitlistOffers marks up to limit held offers whose time ran out
	// at now lapsed (their entries waiting again) and returns them. Two
	// concurrent callers never lapse the same offer (FOR UPDATE SKIP
	// LOCKED on PostgreSQL).
	LapseWaitlistOffers(ctx context.Context, now time.Time, limit int) ([]WaitlistOffer, error)
	// LeaveWaitlist marks the person's entry left: ErrNotFound when the
	// account has no entry with the reference, ErrConflict when it is no
	// longer waiting or offered. An offer it held lapses with it and is
	// returned, so that the caller passes its slot on (nil: none held).
	LeaveWaitlist(ctx context.Context, accountID, reference string, now time.Time) (WaitlistEntry, *WaitlistOffer, error)
	// ListHeldOffers returns the live offers at now of the staff members
	// whose blocked span intersects [from, to).
	ListHeldOffers(ctx context.Context, staffIDs []string, from, to, now time.Time) ([]WaitlistOffer, error)
}
