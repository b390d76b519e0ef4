package rshttp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

// agentAt is agentFor through the server listening at addr: the request
// still names the first server's host, as behind a load balancer.
func (e *env) agentAt(account store.Account, link store.Link, addr string) agent {
	e.t.Helper()
	tok := e.token(func(c *tokenClaims) { c.Sub, c.ClientID, c.LinkID = account.ID, link.ClientID, link.ID })
	base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}, MaxIdleConnsPerHost: 4}
	c := mcp.NewClient(&mcp.Implementation{Name: "linkslot-waitlist-race", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: e.resource, HTTPClient: &http.Client{Transport: bearerTransport{token: tok, base: base}},
		DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := c.Connect(e.ctx, tr, nil)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return agent{t: e.t, cs: cs, link: link}
}

// TestWaitlistRacePostgres: two resource servers, each with its own pool,
// booking engine and outbox worker, on one PostgreSQL database. Ten people
// wait for any classic haircut over three days. 25 people cancel their
// bookings while 25 others try to book exactly those times, through both
// servers at once, and the waiting people book the offers they get. No slot
// is ever offered twice, no two confirmed bookings overlap, each of the
// first ten freed slots goes to a waiting person and nobody else, and the
// other fifteen to the people trying to book them.
func TestWaitlistRacePostgres(t *testing.T) {
	raw := sqltest.MustURL(t, "postgres")
	ctx := context.Background()
	open := func() *sqlstore.Store {
		s, err := sqlstore.Open(ctx, raw, sqlstore.Options{MaxOpenConns: 16})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s1 := open()
	if _, err := s1.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{noLimits: true, store: s1})
	deps := e.deps
	deps.Store = open()
	h2, err := rshttp.New(ctx, deps)
	if err != nil {
		t.Fatal(err)
	}
	rs2 := httptest.NewServer(h2)
	t.Cleanup(rs2.Close)
	addrs := []string{e.rs.Listener.Addr().String(), rs2.Listener.Addr().String()}
	person := func(name string, i int) agent {
		acc := e.mustAccount(fmt.Sprintf("%s%02d@example.com", name, i))
		link := e.newLink(acc, fmt.Sprintf("%s-app-%02d", name, i))
		return e.agentAt(acc, link, addrs[i%2])
	}

	// 25 times that do not touch each other, over two staff members and
	// three days.
	type slot struct{ staff, start string }
	var slots []slot
	look := person("looker", 0)
	for _, day := range []string{"2026-03-04", "2026-03-05", "2026-03-06"} {
		for _, staff := range []string{"stf-marcus-reid", "stf-dana-kowalski"} {
			a := look.call(tools.CheckBusinessAvailability, map[string]any{"business_reference": "biz-brightcut-barbers",
				"service_reference": "svc-classic-haircut", "local_date": day, "with_staff_reference": staff})
			var last time.Time
			for _, part := range strings.Split(a.raw, `"starts_at":"`)[1:] {
				st, err := time.Parse(time.RFC3339, part[:strings.IndexByte(part, '"')])
				if err != nil {
					t.Fatal(err)
				}
				if len(slots) < 25 && (last.IsZero() || !st.Before(last.Add(45*time.Minute))) {
					slots = append(slots, slot{staff, st.Format(time.RFC3339)})
					last = st
				}
			}
		}
	}
	if len(slots) != 25 {
		t.Fatalf("%d slots", len(slots))
	}
	args := func(s slot) map[string]any {
		return map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
			"staff_reference": s.staff, "starts_at": s.start}
	}
	holders := make([]agent, 25)
	held := make([]answer, 25)
	for i, s := range slots {
		holders[i] = person("holder", i)
		if held[i] = holders[i].do(tools.CreateMyBooking, args(s), fmt.Sprintf("holder-key-%02d-xxxxxxx", i)); held[i].Status != "confirmed" {
			t.Fatalf("holder %d: %s", i, held[i].raw)
		}
	}
	waiters := make([]agent, 10)
	for i := range waiters {
		waiters[i] = person("waiter", i)
		if a := waiters[i].hdo(tools.JoinMyWaitlist, joinArgs("", "2026-03-04", "2026-03-06", "", ""), fmt.Sprintf("waiter-key-%02d-xxxxxxx", i)); a.Status != "waitlisted" {
			t.Fatalf("waiter %d: %s", i, a.raw)
		}
	}
	competitors := make([]agent, 25)
	for i := range competitors {
		competitors[i] = person("competitor", i)
	}

	// The race.
	cancelled := make([]chan struct{}, 25)
	for i := range cancelled {
		cancelled[i] = make(chan struct{})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(format string, a ...any) {
		mu.Lock()
		errs = append(errs, fmt.Errorf(format, a...))
		mu.Unlock()
	}
	var won, waitersBooked atomic.Int64
	start := make(chan struct{})
	for i := range slots {
		wg.Add(2)
		go func() { // the holder cancels
			defer wg.Done()
			defer close(cancelled[i])
			<-start
			cargs := map[string]any{"booking_reference": held[i].Booking.Reference, "grant": held[i].grant()}
			pre, err := holders[i].try(tools.CancelMyBooking, cargs)
			if err == nil {
				pre, err = holders[i].try(tools.CancelMyBooking, confirmed(cargs, pre.ConfirmedSummary, fmt.Sprintf("cancel-key-%02d-xxxxxxx", i)))
			}
			if err != nil || pre.Status != "cancelled" {
				fail("cancel %d: %v %s", i, err, pre.raw)
			}
		}()
		go func() { // someone tries to book the same time
			defer wg.Done()
			<-start
			after := 0
			for tries := 0; tries < 2000 && after < 3; tries++ {
				select {
				case <-cancelled[i]:
					after++
				default:
				}
				pre, err := competitors[i].try(tools.CreateMyBooking, args(slots[i]))
				if err != nil {
					fail("competitor %d: %v", i, err)
					return
				}
				if pre.code() == "slot_taken" {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if pre.Status != "confirmation_required" {
					fail("competitor %d preview: %s", i, pre.raw)
					return
				}
				a, err := competitors[i].try(tools.CreateMyBooking, confirmed(args(slots[i]), pre.ConfirmedSummary, fmt.Sprintf("compete-key-%02d-%04d", i, tries)))
				switch {
				case err != nil:
					fail("competitor %d: %v", i, err)
					return
				case a.Status == "confirmed":
					won.Add(1)
					return
				case a.code() != "slot_taken":
					fail("competitor %d: %s", i, a.raw)
					return
				}
			}
		}()
	}
	for i := range waiters {
		wg.Add(1)
		go func() { // a waiting person books the offer they get
			defer wg.Done()
			<-start
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				h, err := waiters[i].htry(tools.SearchMyBookings, map[string]any{"status": "waitlisted"})
				if err != nil {
					fail("waiter %d: %v", i, err)
					return
				}
				es := h.entries(t)
				if len(es) == 1 && es[0].Offer != nil {
					oa := offerArgs(es[0].Offer)
					pre, err := waiters[i].try(tools.CreateMyBooking, oa)
					if err == nil {
						pre, err = waiters[i].try(tools.CreateMyBooking, confirmed(oa, pre.ConfirmedSummary, fmt.Sprintf("offer-key-%02d-xxxxxxxx", i)))
					}
					if err != nil || pre.Status != "confirmed" {
						fail("waiter %d books the offer: %v %s", i, err, pre.raw)
						return
					}
					waitersBooked.Add(1)
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			fail("waiter %d: no offer within 60 s", i)
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	var n int64
	q := func(sql string) int64 {
		t.Helper()
		if err := s1.DB().WithContext(ctx).Raw(sql).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	if d := q(`SELECT count(*) FROM (SELECT staff_id, starts_at FROM waitlist_offers GROUP BY staff_id, starts_at HAVING count(*) > 1) x`); d != 0 {
		t.Errorf("%d slots offered more than once", d)
	}
	if o := q(`SELECT count(*) FROM waitlist_offers`); o != 10 {
		t.Errorf("%d offers, want 10 (one per waiting person)", o)
	}
	if o := q(`SELECT count(*) FROM waitlist_offers o JOIN bookings b ON b.id = o.booking_id
		WHERE o.status = 'used' AND b.account_id = o.account_id AND b.starts_at = o.starts_at AND b.status = 'confirmed'`); o != 10 {
		t.Errorf("%d offers used by their own person, want 10", o)
	}
	if d := q(`SELECT count(*) FROM bookings a JOIN bookings b ON a.staff_id = b.staff_id AND a.id < b.id
		AND a.status = 'confirmed' AND b.status = 'confirmed' AND a.block_start < b.block_end AND b.block_start < a.block_end`); d != 0 {
		t.Errorf("%d pairs of overlapping confirmed bookings", d)
	}
	if won.Load() != 15 || waitersBooked.Load() != 10 {
		t.Errorf("%d times booked by the people racing for them (want 15), %d by waiting people (want 10)", won.Load(), waitersBooked.Load())
	}
	if c := q(`SELECT count(*) FROM bookings WHERE status = 'confirmed'`); c != 25 {
		t.Errorf("%d confirmed bookings, want 25", c)
	}
	t.Logf("25 cancellations and 25 competing bookings on two servers: %d offers, all booked by their person; %d times won by competitors", 10, won.Load())
}

// TestCallbackLimitAcrossServersPostgres: the limit on callback requests
// per link is one limit for every replica. Two resource servers share it
// through the database (rate_windows): two requests confirmed through the
// first server use the link's hour, and a third through the second server
// answers rate_limited and sends nothing.
func TestCallbackLimitAcrossServersPostgres(t *testing.T) {
	s1 := sqltest.Postgres(t)
	ctx := context.Background()
	e := newEnv(t, envOpts{store: s1, callbacks: &rshttp.Limit{PerSecond: 2.0 / 3600, Burst: 2}})
	// The first server was built without shared windows; build both anew
	// the way a PostgreSQL deployment does (app.SharedRateWindows).
	var servers []string
	for i := 0; i < 2; i++ {
		deps := e.deps
		deps.RateWindows = s1
		h, err := rshttp.New(ctx, deps)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		servers = append(servers, srv.Listener.Addr().String())
	}
	one, two := e.agentAt(e.account, e.link, servers[0]), e.agentAt(e.account, e.link, servers[1])
	ask := func(ag agent, topic, key string) handoff {
		args := map[string]any{"business_reference": "biz-brightcut-barbers", "topic": topic}
		pre := ag.hcall(tools.RequestBusinessCallback, args)
		return ag.hcall(tools.RequestBusinessCallback, confirmed(args, pre.ConfirmedSummary, key))
	}
	for i, topic := range []string{"A quote", "Gift cards"} {
		if a := ask(one, topic, fmt.Sprintf("limit-key-%02d-xxxxxxxx", i)); a.Status != "requested" {
			t.Fatalf("request %d: %s", i, a.raw)
		}
	}
	third := ask(two, "Parking", "limit-key-02-xxxxxxxx")
	if !third.isError || third.code() != "rate_limited" || third.Error.RetryAfterSec < 1 {
		t.Fatalf("third request through the other server: %s", third.raw)
	}
	if n := e.count("callback_requests"); n != 2 {
		t.Fatalf("%d callback requests, want 2", n)
	}
}
