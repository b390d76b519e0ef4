package janitor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/janitor"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

var kinds = []store.TokenKind{store.KindAuthorizeCode, store.KindPKCE, store.KindOpenID, store.KindAccessToken, store.KindRefreshToken}

// fill creates, per token kind, due rows (expired 2 h ago: past the grace),
// rows in the grace hour and live rows, half of each spent; expired and
// live idempotency records and client-assertion ids; e-mail links expired
// past their day of grace (half of them used), one within it and a live
// one; expired and live passkey ceremonies and sign-in sessions.
func fill(t *testing.T, s *sqlstore.Store, now time.Time, due int) {
	t.Helper()
	ctx := context.Background()
	acct := store.Account{ID: store.NewID("acc"), Email: "sweep@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	cat, err := s.PutCatalog(ctx, store.Catalog{Business: store.Business{Reference: "sweep-biz", Name: "Sweep", Category: store.CategoryAppointment,
		TimeZone: "UTC", Currency: "EUR", HorizonDays: 30, SlotIntervalMinutes: 15}, Staff: []store.Staff{{Reference: "sweep-staff", Name: "S"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		for i := range due + 4 {
			exp := now.Add(-2 * time.Hour)
			switch {
			case i == due, i == due+1:
				exp = now.Add(-30 * time.Minute) // within the grace
			case i > due+1:
				exp = now.Add(time.Hour) // live
			}
			if err := s.CreateTokenSession(ctx, store.TokenSession{Kind: k, SignatureHash: fmt.Sprintf("%s-%d", k, i),
				RequestID: fmt.Sprintf("req-%d", i), ClientID: "c", Active: i%2 == 0, Request: []byte("{}"),
				ExpiresAt: exp, CreatedAt: exp.Add(-time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range due + 2 {
		exp := now.Add(-time.Minute)
		if i >= due {
			exp = now.Add(24 * time.Hour)
		}
		if _, err := s.ClaimIdempotency(ctx, store.IdempotencyRecord{LinkID: "link", Tool: "create_my_booking",
			Key: fmt.Sprintf("key-%d", i), ArgsHash: "h", State: "pending", CreatedAt: exp.Add(-48 * time.Hour), ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
		// Used client-assertion ids: due ones expired, the others live.
		if err := s.UseClientAssertion(ctx, fmt.Sprintf("jti-%d", i), exp, exp.Add(-5*time.Minute)); err != nil {
			t.Fatal(err)
		}
		// Rate-window rows: due ones expired, the others live.
		if err := s.AddRateHit(ctx, fmt.Sprintf("addr:%d", i), exp.Unix()-2, 1); err != nil {
			t.Fatal(err)
		}
		linkExp := now.Add(-janitor.EmailLinkGrace - time.Minute)
		switch i {
		case due:
			linkExp = now.Add(-time.Hour) // expired, within the grace
		case due + 1:
			linkExp = now.Add(20 * time.Minute) // live
		}
		purpose := store.TokenVerifyEmail
		if i%3 == 0 {
			purpose = store.TokenResetPassword
		}
		tok := store.AccountToken{TokenHash: fmt.Sprintf("link-%d", i), AccountID: acct.ID, Purpose: purpose, Email: acct.Email,
			CreatedAt: linkExp.Add(-30 * time.Minute), ExpiresAt: linkExp}
		if err := s.CreateAccountToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.UseAccountToken(ctx, tok.TokenHash, tok.CreatedAt.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		// Invitations of staff: as the e-mail links, due ones past their
		// grace (used or not), one within it and one live.
		inv := store.MemberInvitation{TokenHash: fmt.Sprintf("inv-%d", i), BusinessID: cat.Business.ID, StaffID: cat.Staff[0].ID,
			Email: "staff@example.com", CreatedAt: linkExp.Add(-time.Hour), ExpiresAt: linkExp}
		if err := s.CreateMemberInvitation(ctx, inv); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.UseMemberInvitation(ctx, inv.TokenHash, inv.CreatedAt.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreateWebAuthnCeremony(ctx, store.WebAuthnCeremony{IDHash: fmt.Sprintf("cer-%d", i), Purpose: store.CeremonyLogin,
			Data: []byte(`{"challenge":"c"}`), ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
		// Sign-in sessions: due ones expired, the others live.
		if err := s.CreateWebSession(ctx, store.WebSession{IDHash: fmt.Sprintf("ws-%d", i), AccountID: acct.ID,
			CreatedAt: exp.Add(-12 * time.Hour), ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
		// Dynamic registrations: due ones unused past their day; one
		// recent and one old that a person linked stay.
		regAt := now.Add(-dcr.UnusedLifetime - time.Minute)
		if i == due {
			regAt = now.Add(-time.Hour)
		}
		regID := fmt.Sprintf("dcr-sweep-%d", i)
		if err := s.InTx(ctx, func(tx store.Store) error {
			if err := tx.CreateClient(ctx, store.Client{ID: regID, Name: "Dynamic", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
				AllowedScopes: []string{"openid"}, GrantTypes: []string{"authorization_code"}, CreatedAt: regAt, UpdatedAt: regAt}); err != nil {
				return err
			}
			return tx.CreateClientRegistration(ctx, store.ClientRegistration{ClientID: regID, AccessTokenHash: "h", Metadata: []byte("{}"), CreatedAt: regAt})
		}); err != nil {
			t.Fatal(err)
		}
		if i == due+1 {
			if _, err := s.UpsertLink(ctx, acct.ID, regID, []string{"openid"}, now.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		// Notifications: due ones delivered or failed past the retention;
		// one delivered recently and one still queued from long ago stay.
		created, status := now.Add(-janitor.OutboxRetention-time.Minute), store.OutboxDelivered
		switch {
		case i == due:
			created = now.Add(-time.Hour)
		case i == due+1:
			status = store.OutboxQueued
		case i%2 == 1:
			status = store.OutboxFailed
		}
		if err := s.EnqueueMessages(ctx, store.OutboxMessage{ID: fmt.Sprintf("msg-%d", i), Channel: store.ChannelEmail,
			Topic: "booking.created", Recipient: acct.Email, Payload: []byte(`{}`), Status: status, CreatedAt: created,
			NextAttemptAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
}

func count(t *testing.T, s *sqlstore.Store, table string) int64 {
	t.Helper()
	var n int64
	if err := s.DB().Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// RunOnce deletes every due row in batches, keeps live rows and rows within
// the grace, counts what it deleted, and leaves no lease behind.
func TestRunOnce(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Second)
		const due = 23
		fill(t, s, now, due)
		reg := prometheus.NewRegistry()
		j, err := janitor.New(janitor.Config{Leases: s, Tasks: janitor.Tasks(s), Clock: func() time.Time { return now },
			Registerer: reg, Batch: 5, Pause: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		res := j.RunOnce(ctx)
		if len(res) != len(kinds)+9 {
			t.Fatalf("results %+v", res)
		}
		for _, r := range res {
			want := int64(due)
			if r.Err != nil || r.Skipped || r.Deleted != want {
				t.Errorf("%s: %+v, want %d deleted", r.Task, r, want)
			}
			if got := counterValue(t, reg, r.Task); got != float64(want) {
				t.Errorf("%s: counter %v", r.Task, got)
			}
		}
		if n := count(t, s, "client_assertions"); n != 2 {
			t.Fatalf("%d client assertions left, want the 2 live ones", n)
		}
		if n := count(t, s, "rate_windows"); n != 2 {
			t.Fatalf("%d rate-window rows left, want the 2 live ones", n)
		}
		if n := count(t, s, "client_registrations"); n != 2 {
			t.Fatalf("%d dynamic registrations left, want the recent one and the linked one", n)
		}
		if n := count(t, s, "outbox_messages"); n != 2 {
			t.Fatalf("%d notifications left, want the recent one and the queued one", n)
		}
		if n := count(t, s, "webauthn_ceremonies"); n != 2 {
			t.Fatalf("%d passkey ceremonies left, want the 2 live ones", n)
		}
		if n := count(t, s, "web_sessions"); n != 2 {
			t.Fatalf("%d sign-in sessions left, want the 2 live ones", n)
		}
		if n := count(t, s, "member_invitations"); n != 2 {
			t.Fatalf("%d invitations left, want the one within its grace and the live one", n)
		}
		if n := count(t, s, "account_tokens"); n != 2 {
			t.Fatalf("%d e-mail links left, want the one within its grace and the live one", n)
		}
		for _, h := range []string{fmt.Sprintf("link-%d", due), fmt.Sprintf("link-%d", due+1)} {
			if _, err := s.GetAccountToken(ctx, h); err != nil {
				t.Fatalf("e-mail link %s: %v", h, err)
			}
		}
		if n := count(t, s, "token_sessions"); n != int64(4*len(kinds)) {
			t.Fatalf("%d token sessions left, want the %d live or in grace", n, 4*len(kinds))
		}
		for _, k := range kinds {
			if _, err := s.GetTokenSession(ctx, k, fmt.Sprintf("%s-%d", k, due)); err != nil {
				t.Fatalf("%s within the grace: %v", k, err)
			}
			if _, err := s.GetTokenSession(ctx, k, fmt.Sprintf("%s-0", k)); err == nil {
				t.Fatalf("%s past the grace survived", k)
			}
		}
		if n := count(t, s, "idempotency_records"); n != 2 {
			t.Fatalf("%d idempotency records left, want 2", n)
		}
		if n := count(t, s, "janitor_leases"); n != 0 {
			t.Fatalf("%d leases left after the pass", n)
		}
		// Nothing left to do: a second pass deletes nothing.
		for _, r := range j.RunOnce(ctx) {
			if r.Deleted != 0 || r.Err != nil {
				t.Errorf("second pass %s: %+v", r.Task, r)
			}
		}
	})
}

func counterValue(t *testing.T, reg *prometheus.Registry, task string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "linkslot_janitor_rows_deleted_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "task" && l.GetValue() == task {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no counter for %s", task)
	return 0
}

// Leases: a task another process holds is skipped; an expired lease is
// taken over; the holder's own lease renews; release frees it.
func TestLeases(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Second)
		take := func(holder string, at time.Time) bool {
			t.Helper()
			ok, err := s.TryLease(ctx, "task", holder, at, at.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !take("a", now) || take("b", now.Add(30*time.Second)) || !take("a", now.Add(30*time.Second)) {
			t.Fatal("a lease is held by one holder and renewed by it")
		}
		if take("b", now.Add(80*time.Second)) || !take("b", now.Add(91*time.Second)) {
			t.Fatal("an expired lease is taken over, a renewed one is not")
		}
		if err := s.ReleaseLease(ctx, "task", "a"); err != nil {
			t.Fatal(err)
		}
		if take("a", now.Add(92*time.Second)) {
			t.Fatal("release by a non-holder freed the lease")
		}
		if err := s.ReleaseLease(ctx, "task", "b"); err != nil {
			t.Fatal(err)
		}
		if !take("a", now.Add(93*time.Second)) {
			t.Fatal("a released lease is free")
		}

		// A janitor finds its tasks leased by another process: it skips
		// them and deletes nothing.
		fill(t, s, now, 3)
		tasks := janitor.Tasks(s)
		for _, tk := range tasks {
			if ok, err := s.TryLease(ctx, tk.Name, "other-replica", now, now.Add(time.Hour)); err != nil || !ok {
				t.Fatalf("lease %s: %v %v", tk.Name, ok, err)
			}
		}
		j, err := janitor.New(janitor.Config{Leases: s, Tasks: tasks, Clock: func() time.Time { return now }, Holder: "me"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range j.RunOnce(ctx) {
			if !r.Skipped || r.Deleted != 0 || r.Err != nil {
				t.Errorf("%s with another holder: %+v", r.Task, r)
			}
		}
		// Once the other replica's leases expire, this one does the work.
		later := now.Add(2 * time.Hour)
		j, _ = janitor.New(janitor.Config{Leases: s, Tasks: tasks, Clock: func() time.Time { return later }, Holder: "me"})
		var deleted int64
		for _, r := range j.RunOnce(ctx) {
			if r.Skipped || r.Err != nil {
				t.Errorf("%s after the other's lease expired: %+v", r.Task, r)
			}
			deleted += r.Deleted
		}
		if deleted == 0 {
			t.Fatal("nothing deleted after taking over")
		}
	})
}

// An extra task (as another part of the product adds) runs beside the
// standard ones, and its failure is reported without stopping the others.
func TestExtraTask(t *testing.T) {
	s := sqltest.SQLite(t)
	calls := 0
	tasks := append(janitor.Tasks(s), janitor.Task{Name: "extra", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		calls++
		if calls == 1 {
			return int64(limit), nil // a full batch: run again
		}
		return 0, fmt.Errorf("extra: the table is gone")
	}})
	j, err := janitor.New(janitor.Config{Leases: s, Tasks: tasks, Batch: 3, Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res := j.RunOnce(context.Background())
	last := res[len(res)-1]
	if last.Task != "extra" || last.Deleted != 3 || last.Err == nil || !strings.Contains(last.Err.Error(), "gone") || calls != 2 {
		t.Fatalf("extra task: %+v after %d calls", last, calls)
	}
	for _, r := range res[:len(res)-1] {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Task, r.Err)
		}
	}
	if _, err := janitor.New(janitor.Config{Leases: s}); err == nil {
		t.Fatal("a janitor without tasks")
	}
}
