package store

import (
	"context"
	"time"
)

// Outbox channels.
const (
	ChannelEmail   = "email"
	ChannelWebhook = "webhook"
)

// Outbox message statuses.
const (
	OutboxQueued    = "queued"
	OutboxDelivered = "delivered"
	OutboxFailed    = "failed"
)

// OutboxMessage is one message to deliver: an e-mail to one address, or one
// event to one webhook endpoint. It is written in the transaction of the
// change it tells of, and delivered by the outbox worker of any process.
type OutboxMessage struct {
	ID            string // the webhook-id of a webhook event: the same on every attempt
	Channel       string // ChannelEmail or ChannelWebhook
	Topic         string // booking.created, link.connected, account.verify, …
	Recipient     string // e-mail: the address
	EndpointID    string // webhook: the endpoint
	BusinessID    string
	BookingID     string
	Payload       []byte // e-mail: the composed message (JSON); webhook: the request body
	Status        string
	Attempts      int // attempts started (a lease starts one)
	NextAttemptAt time.Time
	LeaseOwner    string
	LeaseUntil    *time.Time
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	DeliveredAt   *time.Time
}

// DeliveryAttempt is one attempt to deliver an outbox message.
type DeliveryAttempt struct {
	MessageID  string
	Attempt    int
	Owner      string // the process that made it
	OK         bool
	StatusCode int // webhook: the HTTP status (0: no answer)
	Error      string
	Duration   time.Duration
	At         time.Time
}

// OutboxFilter selects messages for admin listings.
type OutboxFilter struct {
	Status     string // empty: any
	EndpointID string // empty: any
	Channel    string // empty: any
	Limit      int
}

// OutboxCount is how many messages of a channel have a status.
type OutboxCount struct {
	Channel, Status string
	N               int64
}

// Outbox stores messages to deliver and their attempts.
type Outbox interface {
	// EnqueueMessages inserts queued messages (inside the caller's
	// transaction when the Store is transaction-bound).
	EnqueueMessages(ctx context.Context, ms ...OutboxMessage) error
	// LeaseMessages marks up to limit due, queued messages whose lease is
	// free or expired as leased by owner until now+lease, counts the
	// attempt, and returns them. Concurrent callers never get the same
	// message while its lease holds (FOR UPDATE SKIP LOCKED on PostgreSQL;
	// the write lock on SQLite). Only messages of channels are leased (none
	// given: every channel).
	LeaseMessages(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, channels ...string) ([]OutboxMessage, error)
	// FinishAttempt records an attempt and, while owner still holds the
	// lease, sets the message's outcome: delivered (a.OK), queued again at
	// retryAt, or failed (retryAt zero and not OK). It answers ErrConflict
	// when the lease was lost (the attempt is still recorded). The attempt
	// and the outcome commit together, or neither does.
	FinishAttempt(ctx context.Context, owner string, a DeliveryAttempt, retryAt time.Time) error
	GetMessage(ctx context.Context, id string) (OutboxMessage, error)
	// ListMessages returns messages newest first.
	ListMessages(ctx context.Context, f OutboxFilter) ([]OutboxMessage, error)
	// ListAttempts returns the attempts of the messages, in one statement,
	// by message id and then first first.
	ListAttempts(ctx context.Context, messageIDs ...string) ([]DeliveryAttempt, error)
	// ReplayMessage queues a failed or queued message again for delivery at
	// now, keeping its id. It answers ErrConflict for a delivered message
	// and for one whose lease is still held at now (a worker is delivering
	// it): replaying either would deliver it twice.
	ReplayMessage(ctx context.Context, id string, now time.Time) (OutboxMessage, error)
	// CountUndelivered counts the messages not delivered — queued (still
	// to be sent) and failed (given up on) — by channel and status. The
	// delivered ones are left out: their number only grows with the
	// retention, and counting them would read the whole table.
	CountUndelivered(ctx context.Context) ([]OutboxCount, error)
}

// WebhookEndpoint is a business's URL that receives booking events.
type WebhookEndpoint struct {
	ID              string
	BusinessID      string
	URL             string
	Events          []string
	SecretEncrypted []byte
	Enabled         bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Webhooks stores webhook endpoints.
type Webhooks interface {
	CreateWebhookEndpoint(ctx context.Context, e WebhookEndpoint) error
	GetWebhookEndpoint(ctx context.Context, id string) (WebhookEndpoint, error)
	// ListWebhookEndpoints lists a business's endpoints (every endpoint
	// when businessID is empty), oldest first.
	ListWebhookEndpoints(ctx context.Context, businessID string) ([]WebhookEndpoint, error)
	UpdateWebhookEndpoint(ctx context.Context, id string, fn func(WebhookEndpoint) (WebhookEndpoint, error)) (WebhookEndpoint, error)
	DeleteWebhookEndpoint(ctx context.Context, id string) error
}

// Calendar feed kinds.
const (
	FeedAccount  = "account"
	FeedBusiness = "business"
	FeedStaff    = "staff"
)

// CalendarFeed is a private iCalendar feed of bookings.
type CalendarFeed struct {
	ID         string
	Kind       string
	AccountID  string
	BusinessID string
	StaffID    string
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

// FeedBookingFilter selects the bookings of a feed: of an account, or of a
// business (and one staff member), starting at or after Since.
type FeedBookingFilter struct {
	AccountID  string
	BusinessID string
	StaffID    string
	Since      time.Time
	Limit      int
}

// Feeds stores calendar feeds.
type Feeds interface {
	CreateCalendarFeed(ctx context.Context, f CalendarFeed) error
	GetCalendarFeed(ctx context.Context, id string) (CalendarFeed, error)
	// ActiveCalendarFeed returns the newest unrevoked feed of the owner
	// (account, or business and staff; staffID empty for the whole
	// business).
	ActiveCalendarFeed(ctx context.Context, kind, ownerID, staffID string) (CalendarFeed, error)
	// RevokeCalendarFeeds revokes every active feed of the owner.
	RevokeCalendarFeeds(ctx context.Context, kind, ownerID, staffID string, now time.Time) error
	// ListFeedBookings returns bookings by start time.
	ListFeedBookings(ctx context.Context, f FeedBookingFilter) ([]Booking, error)
}
