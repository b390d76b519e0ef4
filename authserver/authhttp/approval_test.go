package authhttp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	consentui "github.com/linkslot/linkslot/consent-ui"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/store/storetest"
)

var _ authhttp.Mounter = (*consentui.UI)(nil)

// TestApprovalCommitsWithCode: the consent POST records the link, queues
// the "app connected" e-mail and stores the code in one transaction. When
// storing the code fails, the person's client gets server_error and there
// is no link, no e-mail and no code; the next approval issues a code that
// redeems, with one link and one e-mail.
func TestApprovalCommitsWithCode(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := storetest.WithFaults(s)
		e := newEnvWith(t, f, func(d *authhttp.Deps) {
			n, err := notify.New(notify.Options{Issuer: d.Config.Issuer})
			if err != nil {
				t.Fatal(err)
			}
			// Approvals that queue the "app connected" e-mail in the
			// outbox, as the identity service's do.
			d.Approvals = identity.Approvals{Mailer: app.AccountMailer(n), Issuer: d.Config.Issuer}
		})
		connected := func() int {
			t.Helper()
			ms, err := s.ListMessages(ctx, store.OutboxFilter{Channel: store.ChannelEmail, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, m := range ms {
				if m.Topic == identity.TopicAppConnected && m.Recipient == e.account.Email {
					n++
				}
			}
			return n
		}
		c := e.oauth(publicID, "", "openid")
		v := oauth2.GenerateVerifier()

		f.FailAfterTokenWrite(errors.New("injected fault"))
		u := e.authorize(c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(v)), e.account.ID, "allow")
		if q := u.Query(); q.Get("error") != "server_error" || q.Get("code") != "" {
			t.Fatalf("answer with the code write failing: %s", u)
		}
		if _, err := s.GetActiveLink(ctx, e.account.ID, publicID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("link after the failed approval: %v", err)
		}
		if n := connected(); n != 0 {
			t.Fatalf("%d app-connected e-mails after the failed approval", n)
		}
		if n, err := s.PurgeTokenSessions(ctx, e.now().Add(24*time.Hour)); err != nil || n != 0 {
			t.Fatalf("token sessions after the failed approval: %d, %v", n, err)
		}

		f.FailAfterTokenWrite(nil)
		code := e.code(c, e.account.ID, oauth2.S256ChallengeOption(v))
		link, err := s.GetActiveLink(ctx, e.account.ID, publicID)
		if err != nil {
			t.Fatalf("link after the approval: %v", err)
		}
		if n := connected(); n != 1 {
			t.Fatalf("%d app-connected e-mails after the approval, want 1", n)
		}
		tok, err := c.Exchange(ctx, code, oauth2.VerifierOption(v))
		if err != nil {
			t.Fatal(err)
		}
		if claims := verifyAccessToken(t, e, tok.AccessToken); claims["link_id"] != link.ID {
			t.Fatalf("access token's link %v, want %s", claims["link_id"], link.ID)
		}
	})
}
