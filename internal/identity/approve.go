package identity

import (
	"context"
	"errors"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// Approvals records people's approvals of apps on the consent page: the
// link that the authorization code, and every token after it, belongs to,
// and the e-mail that tells the person an app was connected. Service.Approvals
// is the configured one; the zero value records links and sends no e-mail.
type Approvals struct {
	// Mailer queues the "app connected" e-mail; nil sends none.
	Mailer Mailer
	// Issuer is the server's public URL, for the addresses in the e-mail.
	Issuer string
}

// Approvals returns the Service's approvals, with its mailer and issuer.
func (s *Service) Approvals() Approvals { return Approvals{Mailer: s.mailer, Issuer: s.issuer} }

// Approve records at now that acct approved client for scopes, inside tx:
// it creates the active link of (acct, client) or, when one exists,
// replaces its scopes and reactivates it, and at the first approval (no
// active link before) queues the "app connected" e-mail in tx too. The
// authorize endpoint hands it the transaction that stores the code the
// approval leads to, so that the link, the e-mail and the code commit
// together or not at all. A server that cannot send e-mail
// (ErrMailUnavailable) still records the approval.
func (a Approvals) Approve(ctx context.Context, tx ApproveTx, acct store.Account, client store.Client, scopes []string, now time.Time) (store.Link, error) {
	_, err := tx.GetActiveLink(ctx, acct.ID, client.ID)
	first := errors.Is(err, store.ErrNotFound)
	if err != nil && !first {
		return store.Link{}, err
	}
	link, err := tx.UpsertLink(ctx, acct.ID, client.ID, scopes, now)
	if err != nil {
		return store.Link{}, err
	}
	if first {
		if err := QueueNotice(ctx, a.Mailer, tx, a.appConnected(acct, client.Name, now)); err != nil {
			return store.Link{}, err
		}
	}
	return link, nil
}

// ApproveTx is what Approve reads and writes in the caller's transaction:
// the person's link to the app, and the "app connected" e-mail.
type ApproveTx interface {
	GetActiveLink(ctx context.Context, accountID, clientID string) (store.Link, error)
	UpsertLink(ctx context.Context, accountID, clientID string, scopes []string, now time.Time) (store.Link, error)
	MailTx
}

func (a Approvals) appConnected(acct store.Account, appName string, now time.Time) Mail {
	return Mail{To: acct.Email, Topic: TopicAppConnected, Subject: "An app was connected to your Linkslot account",
		Text: "Hello,\n\n“" + appName + "” was connected to your Linkslot account on " + now.UTC().Format("2 January 2006 at 15:04 UTC") +
			". It can now do what you approved, such as booking for you, each change only after you confirm it.\n\n" +
			"If this was not you, disconnect it at " + a.Issuer + "/account/connections and change your password.\n"}
}
