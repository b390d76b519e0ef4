package businessui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	businessui "github.com/linkslot/linkslot/consent-ui/business"
	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestEveryRouteRefusesTheWrongMember walks every console route (GET and
// POST) as: nobody signed in (sent to sign in), a member of nothing and
// the owner of another business (404 under /business/{biz}), the staff
// member on another staff member's booking and time off and on the
// owners' pages (404), the owner without a CSRF token (403), and the
// owner (done). A refused request changes nothing: the audit log and the
// booking stay as they were.
func TestEveryRouteRefusesTheWrongMember(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		ctx := context.Background()
		marcus := e.staff("stf-marcus-reid")
		// Marcus's booking and time off: the staff member (Dana) reaches
		// neither.
		b := e.book("stf-marcus-reid", "svc-classic-haircut", e.nextWeekday(time.Wednesday, 2, 10, 0), store.BookingConfirmed)
		off, err := s.AddTimeOff(ctx, e.cat.Business.ID, store.TimeOff{StaffID: marcus.ID,
			StartsAt: e.nextWeekday(time.Thursday, 2, 12, 0).UTC(), EndsAt: e.nextWeekday(time.Thursday, 2, 13, 0).UTC()})
		if err != nil {
			t.Fatal(err)
		}
		staffAcct, _ := s.GetAccountByEmail(ctx, demo.StaffEmail)
		day := e.nextWeekday(time.Friday, 2, 0, 0).Format("2006-01-02")

		path := func(rt businessui.Route) string {
			r := strings.NewReplacer("{biz}", demo.MemberBusiness, "{ref}", b.Reference, "{id}", off.ID,
				"{svc}", "svc-classic-haircut", "{account}", staffAcct.ID, "{n}", "1", "{staff}", marcus.Reference, "{$}", "")
			return r.Replace(rt.Pattern)
		}
		// Forms the owner's request succeeds with.
		forms := map[string]url.Values{
			"/business/join": {"token": {"no-such-invitation"}},
			"/business/{biz}/bookings/{ref}": {"action": {"cancel"}, "version": {"1"}, "reason": {"The barber is ill."},
				"idempotency_key": {"route-table-key-0001"}},
			"/business/{biz}/time-off": {"staff": {marcus.ID}, "from_date": {day}, "from_time": {"09:00"}, "to_date": {day}, "to_time": {"10:00"}},
			"/business/{biz}/hours": {"confirm": {"yes"}, "tue_open1": {"09:00"}, "tue_close1": {"19:00"}, "wed_open1": {"09:00"}, "wed_close1": {"19:00"},
				"thu_open1": {"09:00"}, "thu_close1": {"19:00"}, "fri_open1": {"09:00"}, "fri_close1": {"19:00"}, "sat_open1": {"09:00"}, "sat_close1": {"19:00"},
				"sun_open1": {"10:00"}, "sun_close1": {"16:00"}},
			"/business/{biz}/services/{svc}":  {"duration_minutes": {"30"}, "price": {"36.00"}, "buffer_before_minutes": {"0"}, "buffer_after_minutes": {"5"}},
			"/business/{biz}/policies":        {"min_notice_minutes": {"60"}, "horizon_days": {"60"}, "cancellation_window_minutes": {"1440"}, "cancellation_fee": {"15"}, "agent_booking": {"on"}},
			"/business/{biz}/members/invite":  {"email": {"new-barber@example.com"}, "staff": {marcus.ID}},
			"/business/{biz}/credentials":     {"kind": {"insurance"}, "name": {"Public liability insurance"}, "issuer": {"Aviva"}},
			"/business/{biz}/credentials/{n}": {"kind": {"license"}, "name": {"Barber's license"}, "valid_until": {"2027-06-30"}},
			// Marcus's calendar: connected (its first sync fails, nothing
			// listens there), synced, disconnected; the reminders.
			"/business/{biz}/calendars/{staff}":            {"kind": {"ics"}, "url": {"http://127.0.0.1:1/marcus.ics"}},
			"/business/{biz}/calendars/{staff}/disconnect": {"confirm": {"yes"}},
			"/business/{biz}/reminders":                    {"before": {"24h, 2h"}},
		}
		// The credentials' forms carry the version of the list they showed.
		formOf := func(pattern string) url.Values {
			f := url.Values{}
			for k, v := range forms[pattern] {
				f[k] = v
			}
			if strings.HasPrefix(pattern, "/business/{biz}/credentials") {
				cs, err := s.ListCredentials(ctx, e.cat.Business.ID)
				if err != nil {
					t.Fatal(err)
				}
				f.Set("version", business.CredentialsVersion(cs))
			}
			return f
		}
		// staffMay are the routes the staff member may use (on their own
		// calendar); the rest answer them 404.
		staffMay := map[string]bool{"/business/{biz}": true, "/business/{biz}/day": true, "/business/{biz}/week": true,
			"/business/{biz}/bookings": true, "/business/{biz}/time-off": true,
			"/business/{biz}/callbacks": true, "/business/{biz}/callbacks/{ref}/done": true, "/business/{biz}/calendars": true}

		anon := e.anonymous()
		outsider := e.signIn(outsiderEmail)
		other := e.signIn(otherEmail)
		staff := e.signIn(demo.StaffEmail)
		owner := e.signIn(demo.OwnerEmail)
		do := func(c *client, rt businessui.Route, csrf bool) (*http.Response, string) {
			p := path(rt)
			if rt.Method == "GET" {
				return c.get(p)
			}
			if csrf {
				return c.post(p, formOf(rt.Pattern))
			}
			return c.postRaw(p, formOf(rt.Pattern))
		}
		auditLen := func() int {
			evs, err := s.ListAuditEvents(ctx, 1000, 0)
			if err != nil {
				t.Fatal(err)
			}
			return len(evs)
		}
		before := auditLen()
		for _, rt := range businessui.Routes {
			name := rt.Method + " " + rt.Pattern
			// Nobody signed in: sent to sign in.
			if resp, _ := do(anon, rt, false); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
				t.Errorf("%s, no session: %d %s", name, resp.StatusCode, resp.Header.Get("Location"))
			}
			if rt.NoBusiness {
				continue
			}
			for who, c := range map[string]*client{"a member of nothing": outsider, "the owner of another business": other} {
				if resp, _ := do(c, rt, true); resp.StatusCode != http.StatusNotFound {
					t.Errorf("%s, %s: %d, want 404", name, who, resp.StatusCode)
				}
			}
			if !staffMay[rt.Pattern] && rt.Pattern != "/business/{biz}/time-off" {
				if resp, _ := do(staff, rt, true); resp.StatusCode != http.StatusNotFound {
					t.Errorf("%s, staff: %d, want 404", name, resp.StatusCode)
				}
			}
			if rt.Method == "POST" {
				if resp, _ := do(owner, rt, false); resp.StatusCode != http.StatusForbidden {
					t.Errorf("%s, owner without CSRF: %d, want 403", name, resp.StatusCode)
				}
			}
		}
		// Staff blocking time off for another staff member: 404 too.
		if resp, _ := staff.post("/business/"+demo.MemberBusiness+"/time-off", forms["/business/{biz}/time-off"]); resp.StatusCode != http.StatusNotFound {
			t.Errorf("staff blocks Marcus's time: %d, want 404", resp.StatusCode)
		}
		if n := auditLen(); n != before {
			t.Fatalf("refused requests wrote %d audit events", n-before)
		}
		if got, _ := s.GetBookingByReference(ctx, b.Reference); got.Status != store.BookingConfirmed || got.Version != 1 {
			t.Fatalf("refused requests changed the booking: %+v", got)
		}

		// The staff member on their own calendar.
		for _, p := range []string{"/business", "/business/" + demo.MemberBusiness + "/day", "/business/" + demo.MemberBusiness + "/week",
			"/business/" + demo.MemberBusiness + "/bookings", "/business/" + demo.MemberBusiness + "/time-off"} {
			resp, body := staff.get(p)
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusSeeOther {
				t.Errorf("staff GET %s: %d", p, resp.StatusCode)
			}
			if strings.Contains(body, "Marcus Reid") {
				t.Errorf("staff GET %s shows another staff member", p)
			}
		}

		// The owner: every route does its work.
		for _, rt := range businessui.Routes {
			name := rt.Method + " " + rt.Pattern
			resp, body := do(owner, rt, true)
			want := []int{http.StatusOK, http.StatusSeeOther}
			if rt.Pattern == "/business/join" && rt.Method == "POST" {
				want = []int{http.StatusBadRequest} // no such invitation
			}
			ok := false
			for _, w := range want {
				ok = ok || resp.StatusCode == w
			}
			if !ok {
				t.Errorf("%s, owner: %d, want %v\n%s", name, resp.StatusCode, want, body)
			}
			if ct := resp.Header.Get("Content-Security-Policy"); !strings.Contains(ct, "default-src 'none'") || resp.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("%s: security headers missing: %q", name, ct)
			}
		}
		if got, _ := s.GetBookingByReference(ctx, b.Reference); got.Status != store.BookingCancelled || got.CancelReason != "The barber is ill." {
			t.Errorf("the owner's cancel: %+v", got)
		}
		if _, err := s.GetMember(ctx, e.cat.Business.ID, staffAcct.ID); err == nil {
			t.Errorf("the owner's removal of the staff member left them a member")
		}
		// The owner added a credential, edited it and removed it.
		if cs, _ := s.ListCredentials(ctx, e.cat.Business.ID); len(cs) != 0 {
			t.Errorf("the owner's add, edit and remove of a credential left %+v", cs)
		}
	})
}
