package admincli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/admincli"
	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestStaffCalendarCommands: `staff calendar set` with the password on
// standard input connects a Radicale calendar and syncs it; `show` and
// `sync` print the last sync and the busy times; a wrong password is shown
// as the last error with what to fix (exit 1), never the password; the
// audit log has the change without it. `reminders set/show` too.
func TestStaffCalendarCommands(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		ctx := context.Background()
		if _, err := st.PutCatalog(ctx, store.Catalog{Business: store.Business{Reference: "kiez", Name: "Kiez", Category: store.CategoryAppointment,
			TimeZone: "Europe/Berlin", Currency: "EUR", AgentBooking: true},
			Services: []store.Service{{Reference: "cut", Name: "Cut", DurationMinutes: 30}},
			Staff:    []store.Staff{{Reference: "mia", Name: "Mia", ServiceIDs: []string{"cut"}}}}); err != nil {
			t.Fatal(err)
		}
		cals := &calendar.Service{Store: st, Sealer: calendar.NewSealer([]byte("0123456789abcdef0123456789abcdef-k")), Host: "auth.test",
			Development: true, Timeout: 5 * time.Second}
		svc, err := admin.New(admin.Config{Store: st, Calendars: cals})
		if err != nil {
			t.Fatal(err)
		}
		run := func(stdin string, args ...string) (int, string, string) {
			root := &cobra.Command{Use: "authserver"}
			root.AddCommand(admincli.Commands(admincli.Env{Service: func(context.Context) (*admin.Service, error) { return svc, nil }})...)
			var out, errb bytes.Buffer
			code := cmdline.Execute(ctx, root, args, cmdline.IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
			return code, out.String(), errb.String()
		}
		code, out, errs := run(r.Password+"\n", "staff", "calendar", "set", "kiez", "mia", "--caldav", r.URL(), "--username", r.User, "--password-stdin")
		if code != 0 || !strings.Contains(out, "Last error:  none") || !strings.Contains(out, "CalDAV") {
			t.Fatalf("set: exit %d\n%s%s", code, out, errs)
		}
		if code, out, _ := run("", "staff", "calendar", "show", "kiez", "mia", "--json"); code != 0 || !strings.Contains(out, `"synced_at": "`) {
			t.Fatalf("show: exit %d\n%s", code, out)
		}
		if code, out, _ := run("", "staff", "calendar", "sync", "kiez", "mia"); code != 0 || strings.Contains(out, r.Password) {
			t.Fatalf("sync: exit %d\n%s", code, out)
		}
		code, out, errs = run("wrong-password\n", "staff", "calendar", "set", "kiez", "mia", "--caldav", r.URL(), "--username", r.User, "--password-stdin")
		if code != 1 || !strings.Contains(out, "refused the user name or password") || strings.Contains(out+errs, "wrong-password") {
			t.Fatalf("wrong password: exit %d\n%s%s", code, out, errs)
		}
		if code, _, errs := run("", "staff", "calendar", "set", "kiez", "mia", "--caldav", r.URL()); code != 2 || !strings.Contains(errs, "--password-stdin") {
			t.Fatalf("without a password: exit %d %s", code, errs)
		}
		evs, _ := st.ListAuditEvents(ctx, 10, 0)
		found := false
		for _, e := range evs {
			if e.Action == "calendar.set" {
				found = true
				if strings.Contains(string(e.After), "password") && strings.Contains(string(e.After), r.Password) {
					t.Fatalf("the audit event holds the password: %s", e.After)
				}
			}
		}
		if !found {
			t.Fatal("no calendar.set audit event")
		}
		if code, out, _ := run("", "reminders", "show", "kiez"); code != 0 || !strings.Contains(out, "24h, 2h") {
			t.Fatalf("reminders show: exit %d %s", code, out)
		}
		if code, out, _ := run("", "reminders", "set", "kiez", "48h,90m"); code != 0 || !strings.Contains(out, "48h, 90m") {
			t.Fatalf("reminders set: exit %d %s", code, out)
		}
		if code, out, _ := run("", "reminders", "set", "kiez", "off"); code != 0 || !strings.Contains(out, "off") {
			t.Fatalf("reminders off: exit %d %s", code, out)
		}
		if offs, _ := st.ReminderOffsets(ctx, mustBiz(t, st, "kiez")); len(offs) != 0 {
			t.Fatalf("reminders after off: %v", offs)
		}
	})
}

func mustBiz(t *testing.T, st *sqlstore.Store, ref string) string {
	b, err := st.GetBusiness(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return b.ID
}
