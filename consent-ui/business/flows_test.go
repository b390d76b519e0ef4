package businessui_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestStaleFormChangesNothing: a form showing version 1 of a booking that
// someone else changed since says so and changes nothing; the same form
// sent twice acts once.
func TestStaleFormChangesNothing(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		ctx := context.Background()
		b := e.book(demo.MemberStaff, "svc-classic-haircut", e.nextWeekday(time.Tuesday, 3, 10, 0), store.BookingConfirmed)
		if _, err := s.UpdateBooking(ctx, b.ID, func(x store.Booking) (store.Booking, error) {
			x.Version++ // someone else's change
			x.Notes = "Changed elsewhere."
			return x, nil
		}); err != nil {
			t.Fatal(err)
		}
		owner := e.signIn(demo.OwnerEmail)
		path := "/business/" + demo.MemberBusiness + "/bookings/" + b.Reference
		form := url.Values{"action": {"cancel"}, "version": {"1"}, "reason": {"Closed for a funeral."}, "idempotency_key": {"stale-form-key-000001"}}
		resp, body := owner.post(path, form)
		if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "Someone else changed this booking") {
			t.Fatalf("stale form: %d\n%s", resp.StatusCode, body)
		}
		if got, _ := s.GetBookingByReference(ctx, b.Reference); got.Status != store.BookingConfirmed || got.Version != 2 {
			t.Fatalf("a stale form changed the booking: %+v", got)
		}
		form.Set("version", "2")
		form.Set("idempotency_key", "fresh-form-key-000001")
		for i := range 2 {
			if resp, body := owner.post(path, form); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("submit %d: %d\n%s", i+1, resp.StatusCode, body)
			}
		}
		if got, _ := s.GetBookingByReference(ctx, b.Reference); got.Status != store.BookingCancelled || got.Version != 3 {
			t.Fatalf("after the double submit: %+v", got)
		}
	})
}

var joinLink = regexp.MustCompile(`/business/join\?token=([A-Za-z0-9_%-]+)`)

// TestInvitationJoinsOnce: an owner invites a staff member; whoever
// follows the e-mailed link while signed in becomes that staff member, once;
// the link then works no more.
func TestInvitationJoinsOnce(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		ctx := context.Background()
		marcus := e.staff("stf-marcus-reid")
		owner := e.signIn(demo.OwnerEmail)
		if resp, body := owner.post("/business/"+demo.MemberBusiness+"/members/invite", url.Values{"email": {"Not an address"}, "staff": {marcus.ID}}); resp.StatusCode != http.StatusBadRequest ||
			!strings.Contains(body, "e-mail address") {
			t.Fatalf("bad address: %d", resp.StatusCode)
		}
		if resp, _ := owner.post("/business/"+demo.MemberBusiness+"/members/invite", url.Values{"email": {outsiderEmail}, "staff": {marcus.ID}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("invite: %d", resp.StatusCode)
		}
		msgs, err := s.ListMessages(ctx, store.OutboxFilter{Channel: store.ChannelEmail, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var token string
		for _, m := range msgs {
			if m.Topic == business.TopicInvitation && m.Recipient == outsiderEmail {
				if mm := joinLink.FindStringSubmatch(string(m.Payload)); mm != nil {
					token, _ = url.QueryUnescape(mm[1])
				}
			}
		}
		if token == "" {
			t.Fatal("no invitation e-mail with a link")
		}
		evs, _ := s.ListAuditEvents(ctx, 100, 0)
		for _, ev := range evs {
			if strings.Contains(string(ev.After)+string(ev.Before)+ev.Target, token) {
				t.Fatalf("the audit log holds the invitation token: %s", ev.Action)
			}
		}
		// Signed out: sent to sign in, back to the link.
		if resp, _ := e.anonymous().get("/business/join?token=" + url.QueryEscape(token)); resp.StatusCode != http.StatusSeeOther ||
			!strings.Contains(resp.Header.Get("Location"), "next=") {
			t.Fatalf("signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		invitee := e.signIn(outsiderEmail)
		_, page := invitee.get("/business/join?token=" + url.QueryEscape(token))
		if !strings.Contains(page, "Accept the invitation") {
			t.Fatalf("join page:\n%s", page)
		}
		resp, _ := invitee.post("/business/join", url.Values{"token": {token}})
		if resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "/day?done=joined") {
			t.Fatalf("accept: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		acct, _ := s.GetAccountByEmail(ctx, outsiderEmail)
		m, err := s.GetMember(ctx, e.cat.Business.ID, acct.ID)
		if err != nil || m.Role != store.RoleStaff || m.StaffID != marcus.ID {
			t.Fatalf("membership: %+v %v", m, err)
		}
		// The link works once, for anyone.
		other := e.signIn(otherEmail)
		if resp, body := other.post("/business/join", url.Values{"token": {token}}); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not valid") {
			t.Fatalf("second use: %d", resp.StatusCode)
		}
	})
}

// TestHoursReachEveryReplica: an edit of hours through the console moves
// the business's version, so a booking engine of another process, whose
// catalog was cached before, answers with the new hours at once.
func TestHoursReachEveryReplica(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		replica := booking.NewService(s, store.SystemClock)
		thu := e.nextWeekday(time.Thursday, 3, 0, 0).Format("2006-01-02")
		if before := slotsAt(t, replica, "stf-marcus-reid", "svc-classic-haircut", thu); !contains(before, "09:00") {
			t.Fatalf("no 09:00 slot before: %v", before)
		}
		owner := e.signIn(demo.OwnerEmail)
		form := url.Values{}
		for _, d := range []string{"tue", "wed", "thu", "fri", "sat"} {
			form.Set(d+"_open1", "12:00")
			form.Set(d+"_close1", "19:00")
		}
		if resp, body := owner.post("/business/"+demo.MemberBusiness+"/hours", form); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("hours: %d\n%s", resp.StatusCode, body)
		}
		after := slotsAt(t, replica, "stf-marcus-reid", "svc-classic-haircut", thu)
		if contains(after, "09:00") || contains(after, "11:30") || !contains(after, "12:00") {
			t.Fatalf("the other replica answers with the old hours: %v", after)
		}
		// Sunday is closed now: the form left it empty.
		if cat, _ := s.LoadCatalog(context.Background(), demo.MemberBusiness); len(cat.OpeningHours) != 5 {
			t.Fatalf("hours = %v", cat.OpeningHours)
		}
		evs, _ := s.ListAuditEvents(context.Background(), 10, 0)
		if len(evs) == 0 || evs[0].Action != "business.hours" {
			t.Fatalf("no audit event of the hours")
		}
	})
}
