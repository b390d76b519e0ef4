package admin_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestUsers: list with a query, show, disable (sessions ended, links and
// their tokens revoked, audited), enable, and the refusals — on every
// backend.
func TestUsers(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		bg := context.Background()
		svc := newService(t, s)
		cli := admin.Actor{ID: admin.ActorCLI}
		root, err := svc.CreateUser(bg, cli, "root@example.com", "Root-Passphrase-123", true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []string{"ana@example.com", "bob@example.org", "ana.b@work_example.com", "100%@example.com"} {
			if _, err := svc.CreateUser(bg, cli, e, "Person-Passphrase-123", false); err != nil {
				t.Fatal(err)
			}
		}
		emails := func(q string, limit, offset int) ([]string, bool) {
			t.Helper()
			us, more, err := svc.ListUsers(bg, q, limit, offset)
			if err != nil {
				t.Fatalf("ListUsers(%q): %v", q, err)
			}
			var out []string
			for _, u := range us {
				out = append(out, u.Email)
			}
			return out, more
		}
		for _, c := range []struct {
			q    string
			want []string
		}{
			{"", []string{"100%@example.com", "ana.b@work_example.com", "ana@example.com", "bob@example.org", "root@example.com"}},
			{"ANA", []string{"ana.b@work_example.com", "ana@example.com"}},
			{"example.org", []string{"bob@example.org"}},
			{"%", []string{"100%@example.com"}}, // a LIKE wildcard is matched literally
			{"_", []string{"ana.b@work_example.com"}},
			{"nobody", nil},
		} {
			if got, _ := emails(c.q, 0, 0); !slices.Equal(got, c.want) {
				t.Errorf("ListUsers(%q) = %v, want %v", c.q, got, c.want)
			}
		}
		if got, more := emails("", 2, 2); !slices.Equal(got, []string{"ana@example.com", "bob@example.org"}) || !more {
			t.Errorf("page 2 of 2 = %v more=%v", got, more)
		}
		if _, _, err := svc.ListUsers(bg, strings.Repeat("a", 300), 0, 0); !errors.Is(err, admin.ErrInvalid) {
			t.Errorf("over-long query: %v", err)
		}

		ana, _ := s.GetAccountByEmail(bg, "ana@example.com")
		now := time.Now()
		must(t, s.CreateClient(bg, store.Client{ID: "agent", Name: "Agent", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
			AllowedScopes: []string{"openid"}, CreatedAt: now, UpdatedAt: now}))
		l, err := s.UpsertLink(bg, ana.ID, "agent", []string{"openid"}, now)
		must(t, err)
		must(t, s.CreateTokenSession(bg, store.TokenSession{Kind: store.KindRefreshToken, SignatureHash: "sig-ana", RequestID: "req-ana",
			ClientID: "agent", AccountID: ana.ID, LinkID: l.ID, Active: true, Request: []byte("{}"), ExpiresAt: now.Add(time.Hour), CreatedAt: now}))
		must(t, s.CreateWebSession(bg, store.WebSession{IDHash: "ws-ana", AccountID: ana.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))

		d, err := svc.GetUser(bg, " ANA@example.com ")
		must(t, err)
		if d.Account.ID != ana.ID || len(d.Links) != 1 || d.Links[0].Status != store.LinkActive || d.Links[0].ClientID != "agent" {
			t.Fatalf("GetUser = %+v", d)
		}
		if _, err := svc.GetUser(bg, "nobody@example.com"); !errors.Is(err, admin.ErrNotFound) {
			t.Errorf("GetUser(unknown) = %v", err)
		}

		info, err := svc.SetUserDisabled(bg, admin.Actor{ID: root.ID}, "ana@example.com", true)
		must(t, err)
		if !info.Disabled {
			t.Fatalf("disable answered %+v", info)
		}
		if _, err := s.GetWebSession(bg, "ws-ana"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the session survived the disable: %v", err)
		}
		if l2, _ := s.GetLink(bg, l.ID); l2.Status != store.LinkRevoked {
			t.Errorf("link after disable = %+v", l2)
		}
		if ts, _ := s.GetTokenSession(bg, store.KindRefreshToken, "sig-ana"); ts.Active {
			t.Error("the refresh token survived the disable")
		}
		evs := auditOf(t, s)
		last := evs[len(evs)-1]
		if last.Action != "user.disable" || last.Target != "ana@example.com" || last.ActorID != root.ID ||
			!strings.Contains(string(last.After), `"links_revoked":1`) || strings.Contains(string(last.After), "argon2") {
			t.Errorf("audit = %+v after=%s", last, last.After)
		}

		// An administrator cannot disable their own account; nothing changes.
		if _, err := svc.SetUserDisabled(bg, admin.Actor{ID: root.ID}, "root@example.com", true); !errors.Is(err, admin.ErrConflict) {
			t.Errorf("self-disable = %v", err)
		}
		if r, _ := s.GetAccount(bg, root.ID); r.Disabled {
			t.Error("the self-disable changed the account")
		}
		if _, err := svc.SetUserDisabled(bg, cli, "nobody@example.com", true); !errors.Is(err, admin.ErrNotFound) {
			t.Errorf("disable unknown = %v", err)
		}
		if n := len(auditOf(t, s)); n != len(evs) {
			t.Errorf("refused operations wrote %d audit events", n-len(evs))
		}

		info, err = svc.SetUserDisabled(bg, cli, "ana@example.com", false)
		must(t, err)
		if info.Disabled {
			t.Fatalf("enable answered %+v", info)
		}
		if l2, _ := s.GetLink(bg, l.ID); l2.Status != store.LinkRevoked {
			t.Error("enabling brought a revoked link back")
		}
		if evs := auditOf(t, s); evs[len(evs)-1].Action != "user.enable" {
			t.Errorf("last audit = %+v", evs[len(evs)-1])
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
