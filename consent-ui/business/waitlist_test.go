package businessui_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestRemovedTimeOffOffersTheWaitlist: the owner removes Marcus's morning
// off on the Time off page of the authorization server as it is wired
// (app.NewAuthServices): the demo person, who waits for Marcus that
// morning, is offered its first slot, with an e-mail queued in the outbox
// (docs/design.md "The waitlist").
func TestRemovedTimeOffOffersTheWaitlist(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		ctx := context.Background()
		marcus := e.staff("stf-marcus-reid")
		day, err := time.ParseInLocation("2006-01-02", booking.DemoBarberDay(time.Now(), 3), e.loc)
		if err != nil {
			t.Fatal(err)
		}
		from, to := day.Add(9*time.Hour), day.Add(12*time.Hour)
		off, err := s.AddTimeOff(ctx, e.cat.Business.ID, store.TimeOff{StaffID: marcus.ID, StartsAt: from, EndsAt: to, Reason: "Dentist"})
		if err != nil {
			t.Fatal(err)
		}
		person, err := s.GetAccountByEmail(ctx, demo.AccountEmail)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		entry := store.WaitlistEntry{ID: store.NewID("wle"), Reference: "WL-" + booking.NewReference(), AccountID: person.ID,
			BusinessID: e.cat.Business.ID, ServiceID: e.service("svc-classic-haircut").ID, StaffID: marcus.ID,
			FromDate: day.Format("2006-01-02"), ToDate: day.Format("2006-01-02"), EarliestMin: 9 * 60, LatestMin: 12 * 60,
			Status: store.WaitlistWaiting, CreatedAt: now, UpdatedAt: now}
		if err := s.InsertWaitlistEntry(ctx, entry); err != nil {
			t.Fatal(err)
		}

		owner := e.signIn(demo.OwnerEmail)
		if resp, body := owner.post("/business/"+demo.MemberBusiness+"/time-off/"+off.ID+"/remove", nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("remove: %d\n%s", resp.StatusCode, body)
		}
		var offers []struct {
			EntryID  string
			StaffID  string
			StartsAt time.Time
		}
		if err := s.DB().Raw("SELECT entry_id, staff_id, starts_at FROM waitlist_offers WHERE status = ?", store.OfferHeld).Scan(&offers).Error; err != nil {
			t.Fatal(err)
		}
		if len(offers) != 1 || offers[0].EntryID != entry.ID || offers[0].StaffID != marcus.ID || !offers[0].StartsAt.Equal(from) {
			t.Fatalf("offers after the removal: %+v", offers)
		}
		var mails int64
		if err := s.DB().Table("outbox_messages").Where("topic = ? AND channel = ? AND recipient = ?", notify.EventWaitlistOffered,
			store.ChannelEmail, person.Email).Count(&mails).Error; err != nil {
			t.Fatal(err)
		}
		if mails != 1 {
			t.Fatalf("%d offer e-mails queued", mails)
		}
	})
}
