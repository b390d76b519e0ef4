package booking

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestListedSlotsBookThroughStore drives the whole service against a real
// database: every slot it lists can be booked, and after a random sequence
// of creates, moves and cancels no two confirmed bookings of one staff
// member overlap (buffers included).
func TestListedSlotsBookThroughStore(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s, DemoCatalogs(fixtureNow)...)
		rng := rand.New(rand.NewPCG(7, 11))
		type pick struct{ biz, svc string }
		picks := []pick{{"biz-brightcut-barbers", "svc-classic-haircut"}, {"biz-brightcut-barbers", "svc-hot-towel-shave"},
			{"biz-brightcut-barbers", "svc-skin-fade"}, {"biz-thames-physio", "svc-follow-up"}, {"biz-harbour-massage", "svc-remedial-60"}}
		var refs []string
		moves, cancels := 0, 0
		for i := 0; i < 60; i++ {
			p := picks[rng.IntN(len(picks))]
			date := fixtureNow.AddDate(0, 0, 1+rng.IntN(3)).Format("2006-01-02")
			a, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: p.biz, ServiceRef: p.svc, LocalDate: date})
			if err != nil {
				t.Fatal(err)
			}
			var options []struct {
				staff string
				at    time.Time
			}
			for _, st := range a.Staff {
				for _, sl := range st.Slots {
					options = append(options, struct {
						staff string
						at    time.Time
					}{st.StaffReference, sl.StartsAt})
				}
			}
			if len(options) == 0 {
				continue
			}
			o := options[rng.IntN(len(options))]
			switch {
			case len(refs) > 0 && rng.IntN(3) == 0: // move an earlier booking to one of its listed times
				ref := refs[rng.IntN(len(refs))]
				if v, _ := f.svc.MyBooking(ctx, "acc_p", ref); v.Status != "confirmed" {
					continue
				}
				ra, err := f.svc.RescheduleAvailability(ctx, "acc_p", ref, date, "")
				if err != nil {
					t.Fatal(err)
				}
				if len(ra.Staff) == 0 || len(ra.Staff[0].Slots) == 0 {
					continue
				}
				to := ra.Staff[0].Slots[rng.IntN(len(ra.Staff[0].Slots))].StartsAt
				pl, err := f.svc.PlanReschedule(ctx, RescheduleRequest{AccountID: "acc_p", BookingRef: ref, NewStartsAt: to})
				if err != nil {
					t.Fatalf("listed move %s → %s refused: %v", ref, to.Format(time.RFC3339), err)
				}
				if _, err := f.svc.Reschedule(ctx, s, pl); err != nil {
					t.Fatalf("move: %v", err)
				}
				moves++
			case len(refs) > 0 && rng.IntN(6) == 0:
				pl, err := f.svc.PlanCancel(ctx, CancelRequest{AccountID: "acc_p", BookingRef: refs[rng.IntN(len(refs))]})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.svc.Cancel(ctx, s, pl); err != nil {
					t.Fatal(err)
				}
				cancels++
			default:
				b, err := f.create(ctx, CreateRequest{AccountID: "acc_p", BusinessRef: p.biz, ServiceRef: p.svc, StaffRef: o.staff, StartsAt: o.at})
				if err != nil {
					t.Fatalf("listed slot %s %s %s with %s refused: %v", p.biz, p.svc, o.at.Format(time.RFC3339), o.staff, err)
				}
				refs = append(refs, b.Reference)
			}
		}
		var ids []string
		for _, ref := range []string{"biz-brightcut-barbers", "biz-thames-physio", "biz-harbour-massage"} {
			ids = append(ids, staffIDsOf(t, s, ref)...)
		}
		bks, err := s.ListStaffBookings(ctx, ids, fixtureNow.Add(-48*time.Hour), fixtureNow.AddDate(0, 0, 10))
		if err != nil {
			t.Fatal(err)
		}
		if len(bks) < 10 {
			t.Fatalf("only %d bookings made: %v", len(bks), fmt.Sprint(refs))
		}
		assertNoOverlap(t, bks)
		if moves == 0 || cancels == 0 {
			t.Fatalf("sequence made %d moves and %d cancels; the property needs both", moves, cancels)
		}
	})
}
