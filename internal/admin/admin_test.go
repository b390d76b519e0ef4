package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/admincli"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

var fixedNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// tickingClock starts at fixedNow and advances a second per reading, so
// audit events sort in the order they were written.
func tickingClock() store.Clock {
	var mu sync.Mutex
	t := fixedNow
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func newService(t *testing.T, s store.Store) *admin.Service {
	t.Helper()
	svc, err := admin.New(admin.Config{Store: s, Clock: tickingClock()})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// run runs a CLI command and returns its output.
func run(t *testing.T, svc *admin.Service, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := &cobra.Command{Use: "authserver"}
	root.AddCommand(admincli.Commands(admincli.Env{
		Service: func(context.Context) (*admin.Service, error) { return svc, nil },
	})...)
	_, err := cmdline.Run(context.Background(), root, args, cmdline.IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: io.Discard})
	return out.String(), err
}

func mustRun(t *testing.T, svc *admin.Service, stdin string, args ...string) string {
	t.Helper()
	out, err := run(t, svc, stdin, args...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return out
}

// auditOf returns every audit event, oldest first.
func auditOf(t *testing.T, s store.Store) []store.AuditEvent {
	t.Helper()
	evs, err := s.ListAuditEvents(context.Background(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs
}

// checkNoSecrets fails when any audit event contains one of the secrets or
// anything that looks like a stored hash.
func checkNoSecrets(t *testing.T, s store.Store, secrets ...string) {
	t.Helper()
	for _, e := range auditOf(t, s) {
		doc := string(e.Before) + string(e.After) + e.Target
		for _, sec := range secrets {
			if sec != "" && strings.Contains(doc, sec) {
				t.Errorf("audit event %s %s contains a secret", e.Action, e.Target)
			}
		}
		for _, marker := range []string{"hs256$", "$argon2", "secret_hash", "password_hash", "SecretHash", "PasswordHash"} {
			if strings.Contains(doc, marker) {
				t.Errorf("audit event %s %s contains %q", e.Action, e.Target, marker)
			}
		}
	}
}

func TestCLIClients(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s)

		// Public client.
		out := mustRun(t, svc, "", "clients", "create", "--id", "agent-1", "--name", "Agent One", "--public",
			"--redirect-uri", "http://127.0.0.1/callback", "--redirect-uri", "https://agent.example/cb",
			"--allowed-scopes", "openid bookings:read,bookings:write", "--default-scopes", "bookings:read")
		if !strings.Contains(out, "agent-1") || strings.Contains(out, "secret") {
			t.Errorf("create public output:\n%s", out)
		}
		c, err := s.GetClient(ctx, "agent-1")
		if err != nil || !c.Public || c.SecretHash != "" || len(c.RedirectURIs) != 2 || len(c.GrantTypes) != 2 {
			t.Fatalf("stored public client = %+v, %v", c, err)
		}

		// Confidential client: secret printed once, stored hashed.
		out = mustRun(t, svc, "", "clients", "create", "--json", "--id", "conf-1", "--name", "Conf", "--redirect-uri",
			"https://conf.example/cb", "--allowed-scopes", "openid", "--grant-types", "authorization_code")
		var created struct {
			Client admin.ClientInfo `json:"client"`
			Secret string           `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(out), &created); err != nil || created.Secret == "" || !created.Client.HasSecret {
			t.Fatalf("create confidential: %v\n%s", err, out)
		}
		c, _ = s.GetClient(ctx, "conf-1")
		if c.SecretHash == created.Secret || !clients.CompareSecret(c.SecretHash, created.Secret) {
			t.Errorf("secret not stored hashed")
		}
		if strings.Contains(mustRun(t, svc, "", "clients", "show", "conf-1", "--json"), created.Secret) {
			t.Errorf("show reveals the secret")
		}

		// Refused inputs.
		for _, tt := range []struct {
			name string
			args []string
			want string
			is   error
		}{
			{"bad redirect", []string{"clients", "create", "--id", "x", "--name", "X", "--public", "--redirect-uri", "http://evil.example/cb"}, "redirect", admin.ErrInvalid},
			{"fragment", []string{"clients", "create", "--id", "x", "--name", "X", "--public", "--redirect-uri", "https://a.example/cb#frag"}, "fragment", admin.ErrInvalid},
			{"unknown scope", []string{"clients", "create", "--id", "x", "--name", "X", "--public", "--redirect-uri", "https://a.example/cb", "--allowed-scopes", "openid admin:all"}, "admin:all", admin.ErrInvalid},
			{"duplicate id", []string{"clients", "create", "--id", "agent-1", "--name", "Again", "--public", "--redirect-uri", "https://a.example/cb", "--allowed-scopes", "openid"}, "already registered", admin.ErrAlreadyExists},
			{"no scopes", []string{"clients", "create", "--id", "x", "--name", "X", "--public", "--redirect-uri", "https://a.example/cb"}, "at least one allowed scope", admin.ErrInvalid},
			{"unknown client", []string{"clients", "show", "nope"}, "nope", admin.ErrNotFound},
			{"rotate public", []string{"clients", "rotate-secret", "agent-1"}, "public", admin.ErrConflict},
			{"bad update", []string{"clients", "update", "agent-1", "--default-scopes", "email"}, "not in the allowed scopes", admin.ErrInvalid},
			{"unknown command", []string{"clients", "frobnicate"}, "unknown command", cmdline.ErrUsage},
			{"bad flag", []string{"clients", "list", "--bogus"}, "bogus", cmdline.ErrUsage},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := run(t, svc, "", tt.args...)
				if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want %v containing %q", err, tt.is, tt.want)
				}
			})
		}
		if _, err := s.GetClient(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refused client was stored")
		}

		// Update, disable, enable, rotate, delete.
		mustRun(t, svc, "", "clients", "update", "agent-1", "--name", "Agent Uno", "--contact", "ops@agent.example")
		if c, _ := s.GetClient(ctx, "agent-1"); c.Name != "Agent Uno" || c.Contact != "ops@agent.example" || len(c.RedirectURIs) != 2 {
			t.Errorf("updated = %+v", c)
		}
		mustRun(t, svc, "", "clients", "disable", "agent-1")
		if c, _ := s.GetClient(ctx, "agent-1"); !c.Disabled {
			t.Errorf("not disabled")
		}
		if out := mustRun(t, svc, "", "clients", "list"); !strings.Contains(out, "disabled") {
			t.Errorf("list:\n%s", out)
		}
		mustRun(t, svc, "", "clients", "enable", "agent-1")
		if c, _ := s.GetClient(ctx, "agent-1"); c.Disabled {
			t.Errorf("not enabled")
		}
		out = mustRun(t, svc, "", "clients", "rotate-secret", "conf-1")
		i := strings.Index(out, "store it now):\n")
		if i < 0 {
			t.Fatalf("rotate output:\n%s", out)
		}
		newSecret := strings.TrimSpace(out[i+len("store it now):\n"):])
		c, _ = s.GetClient(ctx, "conf-1")
		if !clients.CompareSecret(c.SecretHash, newSecret) || clients.CompareSecret(c.SecretHash, created.Secret) {
			t.Errorf("rotation did not replace the secret")
		}
		mustRun(t, svc, "", "clients", "delete", "conf-1")
		if _, err := s.GetClient(ctx, "conf-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("not deleted: %v", err)
		}

		// Audit: one event per change, by the CLI, no secrets.
		var actions []string
		for _, e := range auditOf(t, s) {
			actions = append(actions, e.Action+" "+e.Target)
			if e.ActorID != admin.ActorCLI || !e.CreatedAt.After(fixedNow) {
				t.Errorf("event %+v", e)
			}
		}
		want := []string{"client.create agent-1", "client.create conf-1", "client.update agent-1", "client.disable agent-1",
			"client.enable agent-1", "client.rotate_secret conf-1", "client.delete conf-1"}
		if strings.Join(actions, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit actions:\n%s\nwant:\n%s", strings.Join(actions, "\n"), strings.Join(want, "\n"))
		}
		evs := auditOf(t, s)
		if !strings.Contains(string(evs[3].Before), `"disabled":false`) || !strings.Contains(string(evs[3].After), `"disabled":true`) {
			t.Errorf("disable before/after: %s / %s", evs[3].Before, evs[3].After)
		}
		checkNoSecrets(t, s, created.Secret, newSecret)
		if out := mustRun(t, svc, "", "audit", "list"); !strings.Contains(out, "client.rotate_secret") {
			t.Errorf("audit list:\n%s", out)
		}
	})
}

func TestCLIUsers(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s)
		const pw = "correct horse battery"
		out := mustRun(t, svc, pw+"\n", "users", "create", "--email", "Ops@Example.com", "--password-stdin", "--admin")
		if !strings.Contains(out, "administrator account ops@example.com") {
			t.Errorf("output: %s", out)
		}
		a, err := s.GetAccountByEmail(ctx, "ops@example.com")
		if err != nil || !a.Admin || !password.Verify(a.PasswordHash, pw) {
			t.Fatalf("account = %+v, %v", a, err)
		}
		if _, err := run(t, svc, pw+"\n", "users", "create", "--email", "ops@example.com", "--password-stdin"); !errors.Is(err, admin.ErrAlreadyExists) {
			t.Errorf("duplicate: %v", err)
		}
		if _, err := run(t, svc, "short\n", "users", "create", "--email", "not-an-email", "--password-stdin"); !errors.Is(err, admin.ErrInvalid) ||
			!strings.Contains(err.Error(), "email") || !strings.Contains(err.Error(), "password") {
			t.Errorf("invalid: %v", err)
		}
		if _, err := run(t, svc, "", "users", "create", "--email", "a@example.com"); !errors.Is(err, cmdline.ErrUsage) {
			t.Errorf("without --password-stdin: %v", err)
		}
		mustRun(t, svc, "", "users", "set-admin", "--email", "ops@example.com", "--admin=false")
		if a, _ := s.GetAccountByEmail(ctx, "ops@example.com"); a.Admin {
			t.Errorf("still admin")
		}
		if _, err := run(t, svc, "", "users", "set-admin", "nobody@example.com"); !errors.Is(err, admin.ErrNotFound) {
			t.Errorf("unknown account: %v", err)
		}
		evs := auditOf(t, s)
		if len(evs) != 2 || evs[0].Action != "user.create" || evs[1].Action != "user.set_admin" ||
			!strings.Contains(string(evs[1].After), `"admin":false`) {
			t.Errorf("audit = %+v", evs)
		}
		checkNoSecrets(t, s, pw)
	})
}

const goodCatalog = `businesses:
  - reference: lisbon-cuts
    name: Lisbon Cuts
    category: appointment
    city: Lisbon
    timezone: Europe/Lisbon
    currency: EUR
    agent_booking: true
    hours: {monday: ["09:00-12:00", "13:00-19:00"]}
    services:
      - {reference: cut, name: Haircut, duration_minutes: 30, price_cents: 2500}
    staff:
      - reference: ana
        name: Ana
        services: [cut]
        hours: {monday: ["09:00-12:00", "13:00-17:00"]}
        time_off: [{from_date: 2026-12-24, to_date: 2026-12-26, reason: Christmas}]
  - reference: ny-diner
    name: NY Diner
    category: restaurant
    timezone: America/New_York
    currency: USD
`

const halfValidCatalog = `businesses:
  - reference: good-place
    name: Good Place
    category: appointment
    timezone: Europe/Berlin
    currency: EUR
  - reference: bad-place
    name: Bad Place
    category: spa
    timezone: Mars/Olympus
    currency: EUR
    staff:
      - reference: b
        name: B
        services: [nope]
        hours: {monday: ["09:00-12:00", "25:00-26:00"]}
`

func TestCLICatalog(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s)
		dir := t.TempDir()
		good := filepath.Join(dir, "catalog.yaml")
		bad := filepath.Join(dir, "bad.yaml")
		os.WriteFile(good, []byte(goodCatalog), 0o600)
		os.WriteFile(bad, []byte(halfValidCatalog), 0o600)

		// A half-valid file writes nothing and lists every problem.
		_, err := run(t, svc, "", "catalog", "import", bad)
		if ps, ok := admin.ProblemsOf(err); !ok || len(ps) != 4 {
			t.Fatalf("half-valid import: %v", err)
		}
		for _, w := range []string{"businesses[1].category", "businesses[1].timezone", "businesses[1].staff[0].services[0]", "businesses[1].staff[0].hours.monday[1]"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("missing problem at %s: %v", w, err)
			}
		}
		if bs, _ := s.ListBusinesses(ctx); len(bs) != 0 {
			t.Errorf("a refused file wrote %d businesses", len(bs))
		}
		if len(auditOf(t, s)) != 0 {
			t.Errorf("a refused import was audited as done")
		}

		out := mustRun(t, svc, "", "catalog", "import", good)
		if !strings.Contains(out, "Imported 2 business(es): lisbon-cuts, ny-diner") {
			t.Errorf("import output: %s", out)
		}
		c, err := s.LoadCatalog(ctx, "lisbon-cuts")
		if err != nil || len(c.Services) != 1 || len(c.Staff) != 1 || len(c.StaffTimeOff[c.Staff[0].ID]) != 1 || len(c.StaffHours[c.Staff[0].ID]) != 2 {
			t.Fatalf("loaded = %+v, %v", c, err)
		}

		// Export → import again is a no-op in content; JSON works too.
		exported := mustRun(t, svc, "", "catalog", "export", "--format", "json")
		if _, err := run(t, svc, exported, "catalog", "import", "-", "--format", "json"); err != nil {
			t.Fatalf("re-import export: %v", err)
		}
		again := mustRun(t, svc, "", "catalog", "export", "--format", "json")
		if again != exported {
			t.Errorf("export changed after re-import:\n%s\n---\n%s", exported, again)
		}

		// Stdin YAML with a problem: nothing changes.
		broken := strings.Replace(goodCatalog, "duration_minutes: 30", "duration_minutes: 0", 1)
		broken = strings.Replace(broken, "name: Lisbon Cuts", "name: Renamed", 1)
		if _, err := run(t, svc, broken, "catalog", "import", "-"); !errors.Is(err, admin.ErrInvalid) {
			t.Errorf("broken: %v", err)
		}
		if b, _ := s.GetBusiness(ctx, "lisbon-cuts"); b.Name != "Lisbon Cuts" {
			t.Errorf("refused import changed the name to %q", b.Name)
		}

		// Agent booking and audit.
		if _, err := svc.SetAgentBooking(ctx, admin.Actor{ID: "acct_x", RequestID: "req-1"}, "lisbon-cuts", false); err != nil {
			t.Fatal(err)
		}
		if b, _ := s.GetBusiness(ctx, "lisbon-cuts"); b.AgentBooking {
			t.Errorf("agent booking still on")
		}
		if _, err := svc.SetAgentBooking(ctx, admin.Actor{ID: "acct_x"}, "nope", true); !errors.Is(err, admin.ErrNotFound) {
			t.Errorf("unknown business: %v", err)
		}
		var actions []string
		for _, e := range auditOf(t, s) {
			actions = append(actions, e.Action+" "+e.Target)
		}
		want := "catalog.import lisbon-cuts,catalog.import ny-diner,catalog.export json,catalog.import lisbon-cuts,catalog.import ny-diner,catalog.export json,business.agent_booking lisbon-cuts"
		if strings.Join(actions, ",") != want {
			t.Errorf("audit:\n%s\nwant\n%s", strings.Join(actions, ","), want)
		}
		evs := auditOf(t, s)
		if len(evs[0].Before) != 0 || !strings.Contains(string(evs[0].After), `"reference": "lisbon-cuts"`) || len(evs[3].Before) == 0 {
			t.Errorf("import before/after: %s / %s", evs[0].Before, evs[0].After)
		}
		last := evs[len(evs)-1]
		if last.ActorID != "acct_x" || last.RequestID != "req-1" || string(last.Before) != `{"agent_booking":true}` || string(last.After) != `{"agent_booking":false}` {
			t.Errorf("agent booking event = %+v", last)
		}
	})
}

// TestImportRollsBackOnStoreConflict: a file that is valid but cannot be
// written as a whole (staff with bookings removed) changes nothing.
func TestImportIsAllOrNothing(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s)
		a := admin.Actor{ID: "cli"}
		if _, err := svc.ImportCatalog(ctx, a, []byte(goodCatalog), "yaml"); err != nil {
			t.Fatal(err)
		}
		c, _ := s.LoadCatalog(ctx, "lisbon-cuts")
		start := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
		acct := store.Account{ID: "acct_1", Email: "p@example.com", PasswordHash: "x", CreatedAt: fixedNow, UpdatedAt: fixedNow}
		if err := s.CreateAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertBooking(ctx, store.Booking{ID: "bk_1", Reference: "BK1", BusinessID: c.Business.ID, ServiceID: c.Services[0].ID,
			StaffID: c.Staff[0].ID, AccountID: acct.ID, StartsAt: start, EndsAt: start.Add(30 * time.Minute), BlockStart: start,
			BlockEnd: start.Add(30 * time.Minute), Status: store.BookingConfirmed, Version: 1, PaymentState: store.PaymentNone,
			Currency: "EUR", CreatedAt: fixedNow, UpdatedAt: fixedNow}); err != nil {
			t.Fatal(err)
		}
		// Second file: renames the diner (first) and drops Ana, who has a booking.
		second := strings.Replace(goodCatalog, "name: NY Diner", "name: NY Diner Renamed", 1)
		second = second[strings.Index(second, "  - reference: ny-diner"):]
		second = "businesses:\n" + second + `  - reference: lisbon-cuts
    name: Lisbon Cuts
    category: appointment
    timezone: Europe/Lisbon
    currency: EUR
    services:
      - {reference: cut, name: Haircut, duration_minutes: 30}
`
		before := len(auditOf(t, s))
		_, err := svc.ImportCatalog(ctx, a, []byte(second), "yaml")
		if !errors.Is(err, admin.ErrInvalid) || !strings.Contains(err.Error(), "businesses[1]") {
			t.Fatalf("import dropping booked staff: %v", err)
		}
		if b, _ := s.GetBusiness(ctx, "ny-diner"); b.Name != "NY Diner" {
			t.Errorf("the first business of a refused file was written: %q", b.Name)
		}
		if len(auditOf(t, s)) != before {
			t.Errorf("audit events of a rolled-back import remain")
		}
	})
}

// TestDemoCatalogRoundTrip: the demo businesses survive export → import →
// export unchanged, through the catalog file, on every backend.
func TestDemoCatalogRoundTrip(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s)
		a := admin.Actor{ID: admin.ActorCLI}
		demo := booking.DemoCatalogs(fixedNow)
		data, err := catalogfile.Export(demo, "yaml")
		if err != nil {
			t.Fatal(err)
		}
		back, err := catalogfile.Parse(data, "yaml")
		if err != nil {
			t.Fatalf("demo catalog does not parse back: %v", err)
		}
		if len(back) != len(demo) {
			t.Fatalf("%d businesses, want %d", len(back), len(demo))
		}
		refs, err := svc.ImportCatalog(ctx, a, data, "yaml")
		if err != nil || len(refs) != len(demo) {
			t.Fatalf("import demo: %v", err)
		}
		first, err := svc.ExportCatalog(ctx, a, "yaml")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ImportCatalog(ctx, a, first, "yaml"); err != nil {
			t.Fatal(err)
		}
		second, _ := svc.ExportCatalog(ctx, a, "yaml")
		if !bytes.Equal(first, second) {
			t.Errorf("export changed after re-import")
		}
	})
}
