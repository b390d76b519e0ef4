package consentui

import "github.com/linkslot/linkslot/internal/identity"

// Approvals are the identity service's approvals of apps: the authorization
// server records a person's consent through them, and they e-mail the
// person when an app is connected to their account.
func (u *UI) Approvals() identity.Approvals { return u.id.Approvals() }
