// Package feed serves private calendar feeds (docs/reference.md §11): a person's
// bookings, or a business's or one staff member's, as an iCalendar document
// at /calendar/TOKEN.ics that any calendar can subscribe to.
//
// A feed is a row (calendar_feeds) naming its owner. Its token is the feed
// id and an HMAC-SHA256 of the id under a key derived from
// LINKSLOT_SECRET_KEY, so nothing secret is stored, the URL can be shown
// again, and checking it is a constant-time comparison. Revoking the row
// (turning the feed off, or replacing it with a new one) makes its URL
// answer 404 at once.
//
// A feed lists the upcoming bookings and those of the last 30 days, with
// the same UID (REFERENCE@ISSUER-HOST), SEQUENCE (the booking's version),
// TZID and VTIMEZONE as the invitations e-mailed for them, so a calendar that
// received both shows one event; cancelled bookings are listed with
// STATUS:CANCELLED.
package feed

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/ical"
	"github.com/linkslot/linkslot/internal/store"
)

// Past is how far back a feed reaches.
const Past = 30 * 24 * time.Hour

// Store is what feeds read and write.
type Store interface {
	store.Feeds
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	LoadCatalogByID(ctx context.Context, businessID string) (store.Catalog, error)
	GetAccount(ctx context.Context, id string) (store.Account, error)
}

// ErrNotFound: no such feed, a wrong token, or a revoked feed — one answer.
var ErrNotFound = errors.New("feed: not found")

// Feeds makes and renders calendar feeds.
type Feeds struct {
	store  Store
	key    []byte
	issuer string
	host   string
	clock  store.Clock
}

// New returns Feeds for the issuer's URLs; secretKey is LINKSLOT_SECRET_KEY.
func New(s Store, secretKey []byte, issuer string, clock store.Clock) (*Feeds, error) {
	if len(secretKey) < 32 {
		return nil, errors.New("feed: the secret key must have at least 32 bytes")
	}
	u, err := url.Parse(issuer)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("feed: issuer %q is not a URL", issuer)
	}
	if clock == nil {
		clock = store.SystemClock
	}
	k := sha256.Sum256(append([]byte("linkslot calendar feeds\x00"), secretKey...))
	return &Feeds{store: s, key: k[:], issuer: strings.TrimRight(issuer, "/"), host: u.Hostname(), clock: clock}, nil
}

func (f *Feeds) mac(id string) string {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Token is the secret token of a feed id.
func (f *Feeds) Token(id string) string { return id + "." + f.mac(id) }

// URL is the subscription URL of a feed id.
func (f *Feeds) URL(id string) string { return f.issuer + "/calendar/" + f.Token(id) + ".ics" }

// check returns the active feed a token names.
func (f *Feeds) check(ctx context.Context, token string) (store.CalendarFeed, error) {
	token = strings.TrimSuffix(token, ".ics")
	id, mac, ok := strings.Cut(token, ".")
	if !ok || id == "" || !hmac.Equal([]byte(mac), []byte(f.mac(id))) {
		return store.CalendarFeed{}, ErrNotFound
	}
	feed, err := f.store.GetCalendarFeed(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && feed.RevokedAt != nil {
		return store.CalendarFeed{}, ErrNotFound
	}
	return feed, err
}

// Account returns the URL of a person's active feed, or "" when it is off.
func (f *Feeds) Account(ctx context.Context, accountID string) (string, error) {
	feed, err := f.store.ActiveCalendarFeed(ctx, store.FeedAccount, accountID, "")
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return f.URL(feed.ID), nil
}

// NewAccountFeed turns a person's feed on, or replaces it: the previous
// URL stops working.
func (f *Feeds) NewAccountFeed(ctx context.Context, accountID string) (string, error) {
	return f.replace(ctx, store.CalendarFeed{Kind: store.FeedAccount, AccountID: accountID})
}

// TurnOffAccount revokes a person's feed.
func (f *Feeds) TurnOffAccount(ctx context.Context, accountID string) error {
	return f.store.RevokeCalendarFeeds(ctx, store.FeedAccount, accountID, "", f.clock())
}

func (f *Feeds) replace(ctx context.Context, feed store.CalendarFeed) (string, error) {
	owner := feed.AccountID
	if feed.Kind != store.FeedAccount {
		owner = feed.BusinessID
	}
	if err := f.store.RevokeCalendarFeeds(ctx, feed.Kind, owner, feed.StaffID, f.clock()); err != nil {
		return "", err
	}
	feed.ID, feed.CreatedAt = store.NewID("cal"), f.clock()
	if err := f.store.CreateCalendarFeed(ctx, feed); err != nil {
		return "", err
	}
	return f.URL(feed.ID), nil
}

// BusinessFeed returns the URL of a business's feed, or of one staff
// member's (staffRef not empty), creating it on first use; replace makes a
// new one and revokes the old.
func (f *Feeds) BusinessFeed(ctx context.Context, businessRef, staffRef string, replace bool) (string, error) {
	biz, err := f.store.GetBusiness(ctx, businessRef)
	if err != nil {
		return "", err
	}
	feed := store.CalendarFeed{Kind: store.FeedBusiness, BusinessID: biz.ID}
	if staffRef != "" {
		cat, err := f.store.LoadCatalogByID(ctx, biz.ID)
		if err != nil {
			return "", err
		}
		for _, st := range cat.Staff {
			if st.Reference == staffRef {
				feed.Kind, feed.StaffID = store.FeedStaff, st.ID
			}
		}
		if feed.StaffID == "" {
			return "", fmt.Errorf("%w: staff %s at %s", store.ErrNotFound, staffRef, businessRef)
		}
	}
	if !replace {
		if cur, err := f.store.ActiveCalendarFeed(ctx, feed.Kind, biz.ID, feed.StaffID); err == nil {
			return f.URL(cur.ID), nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	return f.replace(ctx, feed)
}

// Render returns the iCalendar document of the feed a token names.
func (f *Feeds) Render(ctx context.Context, token string) (string, error) {
	feed, err := f.check(ctx, token)
	if err != nil {
		return "", err
	}
	now := f.clock()
	filter := store.FeedBookingFilter{AccountID: feed.AccountID, BusinessID: feed.BusinessID, StaffID: feed.StaffID,
		Since: now.Add(-Past), Limit: 2000}
	bs, err := f.store.ListFeedBookings(ctx, filter)
	if err != nil {
		return "", err
	}
	// Each business's catalog and time zone are read once per feed.
	type zoned struct {
		cat store.Catalog
		loc *time.Location
	}
	cats := map[string]zoned{}
	forBusiness := feed.Kind != store.FeedAccount
	customers := map[string]string{}
	var events []ical.Event
	name := "Linkslot bookings"
	for _, b := range bs {
		z, ok := cats[b.BusinessID]
		if !ok {
			if z.cat, err = f.store.LoadCatalogByID(ctx, b.BusinessID); err != nil {
				return "", err
			}
			if z.loc, err = time.LoadLocation(z.cat.Business.TimeZone); err != nil {
				return "", err
			}
			cats[b.BusinessID] = z
		}
		customer := ""
		if forBusiness {
			if customer, ok = customers[b.AccountID]; !ok {
				acct, err := f.store.GetAccount(ctx, b.AccountID)
				switch {
				case err == nil:
					customer = store.AccountLabel(acct)
				case !errors.Is(err, store.ErrNotFound):
					return "", err
				}
				customers[b.AccountID] = customer
			}
		}
		events = append(events, f.event(z.cat, z.loc, b, forBusiness, customer))
	}
	if forBusiness {
		z, ok := cats[feed.BusinessID]
		if !ok {
			z.cat, err = f.store.LoadCatalogByID(ctx, feed.BusinessID)
			ok = err == nil
		}
		if ok {
			name = z.cat.Business.Name + " bookings"
			for _, st := range z.cat.Staff {
				if st.ID == feed.StaffID {
					name = st.Name + " at " + z.cat.Business.Name
				}
			}
		}
	}
	return ical.Feed(name, events)
}

// event is one booking of a feed; the business's feeds name the customer
// (store.AccountLabel: "Deleted account" once the person erased theirs)
// and show the notes.
func (f *Feeds) event(cat store.Catalog, loc *time.Location, b store.Booking, forBusiness bool, customer string) ical.Event {
	service, staff := "", ""
	for _, sv := range cat.Services {
		if sv.ID == b.ServiceID {
			service = sv.Name
		}
	}
	for _, st := range cat.Staff {
		if st.ID == b.StaffID {
			staff = st.Name
		}
	}
	desc := fmt.Sprintf("Booking %s with %s.", b.Reference, staff)
	if forBusiness && customer != "" {
		desc += " Customer: " + customer + "."
	}
	if forBusiness && b.Notes != "" {
		desc += " Notes: " + b.Notes
	}
	return ical.Event{UID: b.Reference + "@" + f.host, Sequence: b.Version, Summary: service + " at " + cat.Business.Name,
		Location: cat.Business.Address, Description: desc, Start: b.StartsAt, End: b.EndsAt, Zone: loc,
		Cancelled: b.Status == store.BookingCancelled || b.Status == store.BookingDeclined,
		Tentative: b.Status == store.BookingPending, Stamp: b.UpdatedAt}
}

// Handler serves GET /calendar/{token} (the token ends in .ics): the feed
// as text/calendar, or 404 for any token that does not name an active feed.
func (f *Feeds) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := f.Render(r.Context(), r.PathValue("token"))
		if errors.Is(err, ErrNotFound) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, "the calendar is unavailable; try again later", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
		w.Header().Set("Cache-Control", "private, max-age=300")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte(body))
	})
}
