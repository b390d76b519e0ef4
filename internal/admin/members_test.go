package admin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestMembersCLI drives `businesses members add|list|remove` on every
// backend: owners and staff added, listed owners first, refusals that
// change nothing, and one audit event per change.
func TestMembersCLI(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s)
		if _, err := s.PutCatalog(ctx, booking.DemoCatalogs(fixedNow)[0]); err != nil {
			t.Fatal(err)
		}
		for _, e := range []string{"owner@example.com", "staff@example.com"} {
			if err := s.CreateAccount(ctx, store.Account{ID: store.NewID("acc"), Email: e, PasswordHash: "x", CreatedAt: fixedNow, UpdatedAt: fixedNow}); err != nil {
				t.Fatal(err)
			}
		}
		biz := "biz-brightcut-barbers"
		if out := mustRun(t, svc, "", "businesses", "members", "add", biz, "Owner@Example.com"); !strings.Contains(out, "owner@example.com is now owner of "+biz) {
			t.Fatalf("add owner: %q", out)
		}
		if out := mustRun(t, svc, "", "businesses", "members", "add", biz, "staff@example.com", "--staff", "stf-dana-kowalski"); !strings.Contains(out, "staff member stf-dana-kowalski") {
			t.Fatalf("add staff: %q", out)
		}
		out := mustRun(t, svc, "", "businesses", "members", "list", biz)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[1], "owner@example.com") || !strings.Contains(lines[2], "stf-dana-kowalski") {
			t.Fatalf("list:\n%s", out)
		}
		before := len(auditOf(t, s))
		for _, tc := range []struct {
			name string
			args []string
			want error
		}{
			{"again", []string{"add", biz, "owner@example.com"}, admin.ErrAlreadyExists},
			{"no account", []string{"add", biz, "nobody@example.com"}, admin.ErrNotFound},
			{"no business", []string{"add", "biz-nope", "owner@example.com"}, admin.ErrNotFound},
			{"no staff", []string{"add", biz, "staff@example.com", "--staff", "stf-nope"}, admin.ErrNotFound},
			{"bad address", []string{"add", biz, "not-an-address"}, admin.ErrInvalid},
			{"remove non-member", []string{"remove", biz, "nobody@example.com"}, admin.ErrNotFound},
		} {
			_, err := run(t, svc, "", append([]string{"businesses", "members"}, tc.args...)...)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
			}
		}
		if _, err := run(t, svc, "", "businesses", "members", "add", biz); !errors.Is(err, cmdline.ErrUsage) {
			t.Errorf("one argument: %v, want a usage error", err)
		}
		if n := len(auditOf(t, s)); n != before {
			t.Fatalf("refusals wrote %d audit events", n-before)
		}
		mustRun(t, svc, "", "businesses", "members", "remove", biz, "staff@example.com")
		if out := mustRun(t, svc, "", "businesses", "members", "list", biz, "--json"); strings.Contains(out, "staff@example.com") || !strings.Contains(out, `"role": "owner"`) {
			t.Fatalf("after remove: %s", out)
		}
		var actions []string
		for _, e := range auditOf(t, s) {
			if strings.HasPrefix(e.Action, "business.member.") {
				actions = append(actions, e.Action+" "+e.Target)
			}
		}
		want := "business.member.add biz-brightcut-barbers/owner@example.com,business.member.add biz-brightcut-barbers/staff@example.com,business.member.remove biz-brightcut-barbers/staff@example.com"
		if strings.Join(actions, ",") != want {
			t.Fatalf("audit:\n%s\nwant\n%s", strings.Join(actions, ","), want)
		}
	})
}
