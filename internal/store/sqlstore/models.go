package sqlstore

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/store"
)

// Row types map tables to Go; the schema itself is in /migrations.

type accountRow struct {
	ID              string `gorm:"primaryKey"`
	Email           string
	PasswordHash    string
	Admin           bool
	Disabled        bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
	EmailVerifiedAt *time.Time
	DeletedAt       *time.Time
}

func (accountRow) TableName() string { return "accounts" }

type webSessionRow struct {
	IDHash    string `gorm:"primaryKey;column:id_hash"`
	AccountID string
	CreatedAt time.Time
	ExpiresAt time.Time
}

func (webSessionRow) TableName() string { return "web_sessions" }

type clientRow struct {
	ID             string `gorm:"primaryKey"`
	Name           string
	SecretHash     string
	Public         bool
	RedirectURIs   string `gorm:"column:redirect_uris"`
	AllowedScopes  string
	DefaultScopes  string
	GrantTypes     string
	LogoURL        string `gorm:"column:logo_url"`
	Contact        string
	Disabled       bool
	PinnedDocument string
	OpenLinked     bool
	JWKSURI        string `gorm:"column:jwks_uri"`
	IDTokenAlg     string `gorm:"column:id_token_signed_response_alg"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (clientRow) TableName() string { return "clients" }

type linkRow struct {
	ID         string `gorm:"primaryKey"`
	AccountID  string
	ClientID   string
	Scopes     string
	Status     string
	CreatedAt  time.Time
	LastUsedAt time.Time
	RevokedAt  *time.Time
}

func (linkRow) TableName() string { return "links" }

type tokenRow struct {
	Kind          string `gorm:"primaryKey"`
	SignatureHash string `gorm:"primaryKey"`
	RequestID     string
	ClientID      string
	AccountID     string
	LinkID        string
	Active        bool
	Request       []byte
	ExpiresAt     time.Time
	CreatedAt     time.Time
	// Written by a rotation (ApplyTokenBatch) only, never by an insert
	// (rotationColumns), so code that creates sessions also runs on the
	// schemas before migration 00018 that the upgrade tests build.
	RotatedAt *time.Time
	Successor []byte
}

// rotationColumns are the tokenRow fields an insert leaves out.
var rotationColumns = []string{"RotatedAt", "Successor"}

func (tokenRow) TableName() string { return "token_sessions" }

type keyRow struct {
	ID               string `gorm:"primaryKey"`
	Purpose          string
	Algorithm        string
	PrivateEncrypted []byte
	PublicJWK        []byte `gorm:"column:public_jwk"`
	CreatedAt        time.Time
	RetiredAt        *time.Time
}

func (keyRow) TableName() string { return "signing_keys" }

type businessRow struct {
	ID                        string `gorm:"primaryKey"`
	Reference                 string
	Name                      string
	Description               string
	Category                  string
	City                      string
	Address                   string
	TimeZone                  string
	AgentBooking              bool
	MinNoticeMinutes          int
	HorizonDays               int
	SlotIntervalMinutes       int
	CancellationWindowMinutes int
	CancellationFeeCents      int64
	Currency                  string
	CancellationPolicy        string
	PrivacyNotice             string
	BookingURL                string `gorm:"column:booking_url"`
	ContactEmail              string
	ConfirmationWindowMinutes int
	SearchText                string
	CreatedAt                 time.Time
	UpdatedAt                 time.Time
}

func (businessRow) TableName() string { return "businesses" }

type businessHoursRow struct {
	BusinessID string
	Weekday    int
	StartMin   int
	EndMin     int
}

func (businessHoursRow) TableName() string { return "business_hours" }

type staffHoursRow struct {
	StaffID  string
	Weekday  int
	StartMin int
	EndMin   int
}

func (staffHoursRow) TableName() string { return "staff_hours" }

type serviceRow struct {
	ID                  string `gorm:"primaryKey"`
	BusinessID          string
	Reference           string
	Name                string
	Description         string
	DurationMinutes     int
	PriceCents          int64
	Currency            string
	BufferBeforeMinutes int
	BufferAfterMinutes  int
	DepositRequired     bool
	// RequiresConfirmation: bookings are pending until the business answers.
	RequiresConfirmation bool
}

func (serviceRow) TableName() string { return "services" }

type staffRow struct {
	ID         string `gorm:"primaryKey"`
	BusinessID string
	Reference  string
	Name       string
}

func (staffRow) TableName() string { return "staff" }

type staffServiceRow struct {
	StaffID   string `gorm:"primaryKey"`
	ServiceID string `gorm:"primaryKey"`
}

func (staffServiceRow) TableName() string { return "staff_services" }

type timeOffRow struct {
	ID       string `gorm:"primaryKey"`
	StaffID  string
	StartsAt time.Time
	EndsAt   time.Time
	Reason   string
}

func (timeOffRow) TableName() string { return "staff_time_off" }

type bookingRow struct {
	ID                   string `gorm:"primaryKey"`
	Reference            string
	BusinessID           string
	ServiceID            string
	StaffID              string
	AccountID            string
	LinkID               string
	StartsAt             time.Time
	EndsAt               time.Time
	BlockStart           time.Time
	BlockEnd             time.Time
	Status               string
	Version              int
	Notes                string
	PaymentState         string
	PriceCents           int64
	Currency             string
	CancelReason         string
	CancellationFeeCents int64
	CreatedAt            time.Time
	UpdatedAt            time.Time
	CancelledAt          *time.Time
	RespondBy            *time.Time
}

func (bookingRow) TableName() string { return "bookings" }

type credentialRow struct {
	ID         string `gorm:"primaryKey"`
	BusinessID string
	Position   int
	Kind       string
	Name       string
	Issuer     string
	Number     string
	ValidUntil *string
	UpdatedAt  time.Time
}

func (credentialRow) TableName() string { return "business_credentials" }

type bookingEventRow struct {
	ID        string `gorm:"primaryKey"`
	BookingID string
	Version   int
	Action    string
	StaffID   string
	StartsAt  time.Time
	EndsAt    time.Time
	At        time.Time
}

func (bookingEventRow) TableName() string { return "booking_events" }

type idempotencyRow struct {
	LinkID    string `gorm:"primaryKey"`
	Tool      string `gorm:"primaryKey"`
	Key       string `gorm:"primaryKey"`
	ArgsHash  string
	State     string
	Response  []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

func (idempotencyRow) TableName() string { return "idempotency_records" }

type activityRow struct {
	ID               string `gorm:"primaryKey"`
	AccountID        string
	LinkID           string
	ClientID         string
	Via              string
	Actor            string
	Tool             string
	Arguments        string
	Summary          string
	ConfirmationText string
	IdempotencyKey   string
	Outcome          string
	RequestID        string
	CreatedAt        time.Time
}

func (activityRow) TableName() string { return "activities" }

type auditRow struct {
	ID         string `gorm:"primaryKey"`
	ActorID    string
	Action     string
	Target     string
	Before     string
	After      string
	RequestID  string
	ClientAddr string
	CreatedAt  time.Time
}

func (auditRow) TableName() string { return "audit_events" }

func encodeList(l []string) string {
	if l == nil {
		l = []string{}
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// decodeList reads a list column, which encodeList writes as a compact
// JSON array of strings. json.Marshal escapes only quotes, backslashes,
// control characters, <, >, &, U+2028, U+2029 and invalid UTF-8, so the
// lists the product stores (scopes, grant types, redirect URIs) are
// nearly always plain, and splitList takes those apart without the JSON
// decoder in a tenth of its time: every refresh rotation reads a
// client's four lists. Anything else goes to encoding/json, and
// FuzzDecodeList holds the two to the same answers.
func decodeList(s string) []string {
	if l, ok := splitList(s); ok {
		return l
	}
	var l []string
	_ = json.Unmarshal([]byte(s), &l)
	if l == nil {
		l = []string{}
	}
	return l
}

// splitList answers the strings of s when s is a compact JSON array of
// strings none of which holds an escape, a control character or invalid
// UTF-8, and false for anything else.
func splitList(s string) ([]string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	for i := 0; i < len(body); i++ {
		if c := body[i]; c == '\\' || c < 0x20 {
			return nil, false
		}
	}
	if !utf8.ValidString(body) {
		return nil, false
	}
	l := make([]string, 0, strings.Count(body, ",")+1)
	for body != "" {
		if body[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(body[1:], '"') + 1
		if end == 0 {
			return nil, false
		}
		l = append(l, body[1:end])
		body = body[end+1:]
		if body == "" {
			break
		}
		if body[0] != ',' || len(body) == 1 {
			return nil, false
		}
		body = body[1:]
	}
	return l, true
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := store.UTC(*t)
	return &u
}
