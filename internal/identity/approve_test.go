package identity_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// unavailableMailer answers what the outbox answers with e-mail turned off.
type unavailableMailer struct{}

func (unavailableMailer) QueueMail(context.Context, identity.MailTx, identity.Mail) error {
	return identity.ErrMailUnavailable
}

func (unavailableMailer) MailOff() bool { return true }

// TestApprove: the first approval creates the link and queues one "app
// connected" e-mail in the same transaction; a second one replaces the
// scopes and sends nothing; a failed e-mail leaves no link; a server
// without e-mail still records the approval.
func TestApprove(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk, svc, mb, acct := signedUp(t, s)
		now := clk.Now()
		client := store.Client{ID: "trip-planner", Name: "Trip Planner", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
			AllowedScopes: []string{"openid", "bookings:read", "bookings:write"}, GrantTypes: []string{"authorization_code"},
			CreatedAt: now, UpdatedAt: now}
		if err := s.CreateClient(ctx, client); err != nil {
			t.Fatal(err)
		}
		approve := func(a identity.Approvals, scopes ...string) (store.Link, error) {
			var link store.Link
			err := s.InTx(ctx, func(tx store.Store) error {
				var err error
				link, err = a.Approve(ctx, tx, acct, client, scopes, now)
				return err
			})
			return link, err
		}
		sent := len(mb.all())

		// A failed e-mail rolls the approval back.
		mb.fail = true
		if _, err := approve(svc.Approvals(), "openid"); err == nil {
			t.Fatal("approval with a failing mailer succeeded")
		}
		mb.fail = false
		if _, err := s.GetActiveLink(ctx, acct.ID, client.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("link after a failed approval: %v", err)
		}

		link, err := approve(svc.Approvals(), "openid", "bookings:read")
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.GetActiveLink(ctx, acct.ID, client.ID)
		if err != nil || got.ID != link.ID || !slices.Equal(got.Scopes, []string{"openid", "bookings:read"}) {
			t.Fatalf("link %+v, %v", got, err)
		}
		ms := mb.all()[sent:]
		if len(ms) != 1 || ms[0].Topic != identity.TopicAppConnected || ms[0].To != acct.Email ||
			!strings.Contains(ms[0].Text, "“Trip Planner”") || !strings.Contains(ms[0].Text, "https://linkslot.example/account/connections") ||
			!strings.Contains(ms[0].Text, "1 March 2026 at 09:00 UTC") {
			t.Fatalf("mails of the first approval: %+v", ms)
		}

		// Approving again (more scopes) keeps the link and sends nothing.
		again, err := approve(svc.Approvals(), "openid", "bookings:read", "bookings:write")
		if err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetActiveLink(ctx, acct.ID, client.ID)
		if again.ID != link.ID || len(got.Scopes) != 3 {
			t.Fatalf("second approval: link %s → %s, scopes %v", link.ID, again.ID, got.Scopes)
		}
		if n := len(mb.all()) - sent; n != 1 {
			t.Fatalf("%d e-mails after two approvals, want 1", n)
		}

		// Without e-mail (LINKSLOT_SMTP_URL=off) a first approval is still
		// recorded.
		if err := s.RevokeLink(ctx, link.ID, now); err != nil {
			t.Fatal(err)
		}
		fresh, err := approve(identity.Approvals{Mailer: unavailableMailer{}}, "openid")
		if err != nil || fresh.ID == "" {
			t.Fatalf("approval without e-mail: %+v, %v", fresh, err)
		}
	})
}
