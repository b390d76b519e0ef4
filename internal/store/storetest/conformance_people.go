package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

func testAccountTokens(t *testing.T, s store.Store) {
	a := newAccount(t, s, "tokens@example.com")
	tok := store.AccountToken{TokenHash: "th-1", AccountID: a.ID, Purpose: store.TokenVerifyEmail, Email: a.Email,
		CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}
	must(t, s.CreateAccountToken(ctx, tok))
	wantErr(t, s.CreateAccountToken(ctx, tok), store.ErrAlreadyExists)
	got, err := s.GetAccountToken(ctx, "th-1")
	must(t, err)
	if got.AccountID != a.ID || got.Purpose != store.TokenVerifyEmail || got.Email != a.Email || got.UsedAt != nil {
		t.Errorf("GetAccountToken = %+v", got)
	}
	sameInstant(t, "ExpiresAt", got.ExpiresAt, t0.Add(24*time.Hour))
	_, err = s.GetAccountToken(ctx, "th-missing")
	wantErr(t, err, store.ErrNotFound)

	// Of concurrent uses exactly one wins; the rest answer ErrConflict.
	errs := parallel(8, func(int) error { return s.UseAccountToken(ctx, "th-1", t0.Add(time.Minute)) })
	if count(errs, nil) != 1 || count(errs, store.ErrConflict) != 7 {
		t.Errorf("concurrent uses: %v", errs)
	}
	got, _ = s.GetAccountToken(ctx, "th-1")
	if got.UsedAt == nil {
		t.Fatal("UsedAt not set")
	}
	sameInstant(t, "UsedAt", *got.UsedAt, t0.Add(time.Minute))
	wantErr(t, s.UseAccountToken(ctx, "th-missing", t0), store.ErrNotFound)

	must(t, s.CreateAccountToken(ctx, store.AccountToken{TokenHash: "th-2", AccountID: a.ID, Purpose: store.TokenVerifyEmail,
		Email: a.Email, CreatedAt: t0.Add(time.Hour), ExpiresAt: t0.Add(25 * time.Hour)}))
	must(t, s.CreateAccountToken(ctx, store.AccountToken{TokenHash: "th-3", AccountID: a.ID, Purpose: store.TokenResetPassword,
		Email: a.Email, CreatedAt: t0.Add(time.Hour), ExpiresAt: t0.Add(90 * time.Minute)}))
	n, err := s.CountAccountTokens(ctx, a.ID, store.TokenVerifyEmail, t0.Add(30*time.Minute))
	must(t, err)
	if n != 1 {
		t.Errorf("CountAccountTokens since +30 min = %d, want 1", n)
	}
	must(t, s.DeleteAccountTokens(ctx, a.ID, store.TokenVerifyEmail))
	_, err = s.GetAccountToken(ctx, "th-2")
	wantErr(t, err, store.ErrNotFound)
	if _, err := s.GetAccountToken(ctx, "th-3"); err != nil {
		t.Errorf("a reset link was deleted with the verification links: %v", err)
	}
	must(t, s.DeleteAccountTokens(ctx, a.ID, ""))
	_, err = s.GetAccountToken(ctx, "th-3")
	wantErr(t, err, store.ErrNotFound)
	if _, err := s.GetAccountToken(ctx, "th-1"); err != nil {
		t.Errorf("a used link was withdrawn: %v", err)
	}
}

func testPasskeys(t *testing.T, s store.Store) {
	a := newAccount(t, s, "keys@example.com")
	b := newAccount(t, s, "other-keys@example.com")
	p1 := store.Passkey{ID: "pk_1", AccountID: a.ID, CredentialID: []byte{0, 1, 2, 0xff}, Name: "Laptop", Credential: []byte(`{"a":1}`), CreatedAt: t0}
	p2 := store.Passkey{ID: "pk_2", AccountID: a.ID, CredentialID: []byte{9, 9}, Name: "Phone", Credential: []byte(`{}`), CreatedAt: t0.Add(time.Hour)}
	must(t, s.CreatePasskey(ctx, p2))
	must(t, s.CreatePasskey(ctx, p1))
	// A credential id belongs to one account only.
	wantErr(t, s.CreatePasskey(ctx, store.Passkey{ID: "pk_3", AccountID: b.ID, CredentialID: []byte{0, 1, 2, 0xff}, Name: "x",
		Credential: []byte(`{}`), CreatedAt: t0}), store.ErrAlreadyExists)
	list, err := s.ListPasskeys(ctx, a.ID)
	must(t, err)
	if len(list) != 2 || list[0].ID != "pk_1" || list[1].ID != "pk_2" || list[0].LastUsedAt != nil {
		t.Fatalf("ListPasskeys = %+v", list)
	}
	got, err := s.GetPasskeyByCredentialID(ctx, []byte{0, 1, 2, 0xff})
	must(t, err)
	if got.ID != "pk_1" || !bytes.Equal(got.Credential, []byte(`{"a":1}`)) {
		t.Errorf("GetPasskeyByCredentialID = %+v", got)
	}
	_, err = s.GetPasskeyByCredentialID(ctx, []byte{7})
	wantErr(t, err, store.ErrNotFound)
	used := t0.Add(2 * time.Hour)
	up, err := s.UpdatePasskey(ctx, "pk_1", func(p store.Passkey) (store.Passkey, error) {
		p.Name, p.LastUsedAt, p.AccountID, p.Credential = "Work laptop", &used, b.ID, []byte(`{"a":2}`)
		return p, nil
	})
	must(t, err)
	if up.Name != "Work laptop" || up.AccountID != a.ID {
		t.Errorf("UpdatePasskey = %+v (the account must be kept)", up)
	}
	got, _ = s.GetPasskeyByCredentialID(ctx, []byte{0, 1, 2, 0xff})
	if got.LastUsedAt == nil || got.AccountID != a.ID || string(got.Credential) != `{"a":2}` {
		t.Fatalf("after update = %+v", got)
	}
	sameInstant(t, "LastUsedAt", *got.LastUsedAt, used)
	_, err = s.UpdatePasskey(ctx, "pk_missing", func(p store.Passkey) (store.Passkey, error) { return p, nil })
	wantErr(t, err, store.ErrNotFound)
	boom := errors.New("boom")
	_, err = s.UpdatePasskey(ctx, "pk_1", func(p store.Passkey) (store.Passkey, error) { p.Name = "no"; return p, boom })
	wantErr(t, err, boom)

	// Another account cannot delete it.
	wantErr(t, s.DeletePasskey(ctx, b.ID, "pk_1"), store.ErrNotFound)
	must(t, s.DeletePasskey(ctx, a.ID, "pk_1"))
	wantErr(t, s.DeletePasskey(ctx, a.ID, "pk_1"), store.ErrNotFound)
	if list, _ := s.ListPasskeys(ctx, a.ID); len(list) != 1 {
		t.Errorf("after delete = %+v", list)
	}
}

func testCeremonies(t *testing.T, s store.Store) {
	c := store.WebAuthnCeremony{IDHash: "cer-1", Purpose: store.CeremonyLogin, Data: []byte(`{"challenge":"x"}`), ExpiresAt: t0.Add(5 * time.Minute)}
	must(t, s.CreateWebAuthnCeremony(ctx, c))
	// Of concurrent takes exactly one gets it.
	var mu sync.Mutex
	var got []store.WebAuthnCeremony
	errs := parallel(6, func(int) error {
		c, err := s.TakeWebAuthnCeremony(ctx, "cer-1")
		if err == nil {
			mu.Lock()
			got = append(got, c)
			mu.Unlock()
		}
		return err
	})
	if count(errs, nil) != 1 || count(errs, store.ErrNotFound) != 5 || len(got) != 1 {
		t.Fatalf("concurrent takes: %v", errs)
	}
	if got[0].Purpose != store.CeremonyLogin || string(got[0].Data) != `{"challenge":"x"}` {
		t.Errorf("taken = %+v", got[0])
	}
	sameInstant(t, "ExpiresAt", got[0].ExpiresAt, t0.Add(5*time.Minute))

	// The sweep removes expired ceremonies only, in batches.
	for i, exp := range []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, time.Hour} {
		must(t, s.CreateWebAuthnCeremony(ctx, store.WebAuthnCeremony{IDHash: fmt.Sprintf("cer-sweep-%d", i), Purpose: store.CeremonyRegister,
			AccountID: "acct_x", Data: []byte("{}"), ExpiresAt: t0.Add(exp)}))
	}
	sw := sweeps(t, s)
	sweepBatches(t, "SweepWebAuthnCeremonies", 3, func(limit int) (int64, error) {
		return sw.SweepWebAuthnCeremonies(ctx, t0.Add(10*time.Minute), limit)
	})
	if _, err := s.TakeWebAuthnCeremony(ctx, "cer-sweep-3"); err != nil {
		t.Errorf("the sweep removed an unexpired ceremony: %v", err)
	}
}

func testEraseAccount(t *testing.T, s store.Store) {
	a := newAccount(t, s, "leaving@example.com")
	keep := newAccount(t, s, "staying@example.com")
	newClient(t, s, "erase-agent")
	l, err := s.UpsertLink(ctx, a.ID, "erase-agent", []string{"openid"}, t0)
	must(t, err)
	lk, err := s.UpsertLink(ctx, keep.ID, "erase-agent", []string{"openid"}, t0)
	must(t, err)
	// A link the person disconnected earlier, whose session was left
	// active here to see that erasure reaches every link of theirs.
	newClient(t, s, "erase-old-agent")
	old, err := s.UpsertLink(ctx, a.ID, "erase-old-agent", []string{"openid"}, t0)
	must(t, err)
	must(t, s.RevokeLink(ctx, old.ID, t0))
	for _, ts := range []store.TokenSession{
		{Kind: store.KindAccessToken, SignatureHash: "erase-at", RequestID: "r1", ClientID: "erase-agent", AccountID: a.ID, LinkID: l.ID},
		{Kind: store.KindRefreshToken, SignatureHash: "erase-old-rt", RequestID: "r4", ClientID: "erase-old-agent", AccountID: a.ID, LinkID: old.ID},
		// The person's own session on no link.
		{Kind: store.KindAuthorizeCode, SignatureHash: "erase-code", RequestID: "r5", ClientID: "erase-agent", AccountID: a.ID},
		{Kind: store.KindRefreshToken, SignatureHash: "erase-rt", RequestID: "r1", ClientID: "erase-agent", AccountID: a.ID, LinkID: l.ID},
		{Kind: store.KindRefreshToken, SignatureHash: "keep-rt", RequestID: "r2", ClientID: "erase-agent", AccountID: keep.ID, LinkID: lk.ID},
		// Another account's session on no link (a code before its consent).
		{Kind: store.KindAuthorizeCode, SignatureHash: "keep-code", RequestID: "r3", ClientID: "erase-agent", AccountID: keep.ID},
	} {
		ts.Active, ts.Request, ts.ExpiresAt, ts.CreatedAt = true, []byte("{}"), t0.Add(time.Hour), t0
		must(t, s.CreateTokenSession(ctx, ts))
	}
	must(t, s.CreateWebSession(ctx, store.WebSession{IDHash: "erase-ws", AccountID: a.ID, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}))
	must(t, s.CreateWebSession(ctx, store.WebSession{IDHash: "keep-ws", AccountID: keep.ID, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}))
	must(t, s.CreatePasskey(ctx, store.Passkey{ID: "erase-pk", AccountID: a.ID, CredentialID: []byte("erase"), Name: "x", Credential: []byte("{}"), CreatedAt: t0}))
	must(t, s.CreateAccountToken(ctx, store.AccountToken{TokenHash: "erase-th", AccountID: a.ID, Purpose: store.TokenResetPassword, Email: a.Email, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}))
	must(t, s.AddActivity(ctx, store.Activity{ID: "erase-act", AccountID: a.ID, LinkID: l.ID, ClientID: "erase-agent", Tool: "cancel_my_booking",
		Arguments: []byte("{}"), Summary: "s", ConfirmationText: "yes", IdempotencyKey: "k-00000000000000001", Outcome: []byte("{}"), CreatedAt: t0}))
	cat := putSample(t, s)
	b := newBooking(cat, "ana", "cut", t0.Add(48*time.Hour), store.BookingConfirmed)
	b.AccountID, b.Notes = a.ID, "my phone is 555-0100"
	must(t, s.InsertBooking(ctx, b))

	must(t, s.CreateCalendarFeed(ctx, store.CalendarFeed{ID: "erase-feed", Kind: store.FeedAccount, AccountID: a.ID, CreatedAt: t0}))
	must(t, s.CreateCalendarFeed(ctx, store.CalendarFeed{ID: "keep-feed", Kind: store.FeedAccount, AccountID: keep.ID, CreatedAt: t0}))
	must(t, s.AddMember(ctx, store.Member{BusinessID: b.BusinessID, AccountID: a.ID, Role: store.RoleOwner, CreatedAt: t0}))
	must(t, s.AddMember(ctx, store.Member{BusinessID: b.BusinessID, AccountID: keep.ID, Role: store.RoleOwner, CreatedAt: t0}))
	must(t, s.EraseAccount(ctx, a.ID, t0.Add(time.Minute)))
	if ms, _ := s.ListAccountMembers(ctx, a.ID); len(ms) != 0 {
		t.Errorf("the erased account is still a member: %+v", ms)
	}
	if ms, _ := s.ListAccountMembers(ctx, keep.ID); len(ms) != 1 {
		t.Errorf("another account's membership: %+v", ms)
	}
	_, err = s.ActiveCalendarFeed(ctx, store.FeedAccount, a.ID, "")
	wantErr(t, err, store.ErrNotFound)
	if f, err := s.ActiveCalendarFeed(ctx, store.FeedAccount, keep.ID, ""); err != nil || f.ID != "keep-feed" {
		t.Errorf("another account's feed: %+v %v", f, err)
	}
	got, err := s.GetAccount(ctx, a.ID)
	must(t, err)
	if got.Email != store.ErasedEmail(a.ID) || got.PasswordHash != "" || !got.Disabled || got.DeletedAt == nil || got.EmailVerifiedAt != nil {
		t.Errorf("tombstone = %+v", got)
	}
	if _, err := s.GetAccountByEmail(ctx, "leaving@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the address is still taken: %v", err)
	}
	newAccount(t, s, "leaving@example.com") // free for a new sign-up
	if l2, _ := s.GetLink(ctx, l.ID); l2.Status != store.LinkRevoked {
		t.Errorf("link = %+v", l2)
	}
	for _, k := range []struct {
		kind store.TokenKind
		sig  string
	}{{store.KindAccessToken, "erase-at"}, {store.KindRefreshToken, "erase-rt"}, {store.KindRefreshToken, "erase-old-rt"}, {store.KindAuthorizeCode, "erase-code"}} {
		if ts, err := s.GetTokenSession(ctx, k.kind, k.sig); err != nil || ts.Active {
			t.Errorf("%s after erasure: active %v, %v; want kept and inactive", k.sig, ts.Active, err)
		}
	}
	_, err = s.GetWebSession(ctx, "erase-ws")
	wantErr(t, err, store.ErrNotFound)
	if l, _ := s.ListPasskeys(ctx, a.ID); len(l) != 0 {
		t.Errorf("passkeys = %+v", l)
	}
	_, err = s.GetAccountToken(ctx, "erase-th")
	wantErr(t, err, store.ErrNotFound)
	if acts, _ := s.ListActivity(ctx, a.ID, 10, 0); len(acts) != 0 {
		t.Errorf("activity = %+v", acts)
	}
	bk, err := s.GetBooking(ctx, b.ID)
	must(t, err)
	if bk.Notes != "" || bk.AccountID != a.ID || bk.Status != store.BookingConfirmed {
		t.Errorf("booking after erasure = %+v", bk)
	}
	// Nobody else lost anything.
	if ts, _ := s.GetTokenSession(ctx, store.KindRefreshToken, "keep-rt"); !ts.Active {
		t.Error("another account's token was deactivated")
	}
	if ts, _ := s.GetTokenSession(ctx, store.KindAuthorizeCode, "keep-code"); !ts.Active {
		t.Error("another account's unlinked session was deactivated")
	}
	if _, err := s.GetWebSession(ctx, "keep-ws"); err != nil {
		t.Errorf("another account's session: %v", err)
	}
	// Erasing twice, or an unknown account, answers ErrNotFound.
	wantErr(t, s.EraseAccount(ctx, a.ID, t0), store.ErrNotFound)
	wantErr(t, s.EraseAccount(ctx, "acct_missing", t0), store.ErrNotFound)
}
