package sqlstore_test

import (
	"context"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/migrations"
)

// TestMigrationsDownAndAfterTheWaitlist: on both dialects, a fresh
// database migrated up is taken down past the business migrations
// (00029 calendar tags, 00028 sync tokens, 00027 calendars and reminders, 00026 callbacks and the waitlist, 00023
// members, 00024 search, 00022 booking states) without error; then a
// database at the schema the waitlist left (00026, before connected
// calendars existed) upgrades with the migrations it lacks (00027 on). Calendars are 00027,
// after 00026, for that reason: goose refuses a missing migration lower
// than the database's version (docs/calendars.md).
func TestMigrationsDownAndAfterTheWaitlist(t *testing.T) {
	for _, be := range []string{"sqlite", "postgres"} {
		t.Run(be, func(t *testing.T) {
			ctx := context.Background()
			s, err := sqlstore.Open(ctx, sqltest.MustURL(t, be), sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			fsys, _ := migrations.FS(be)
			d := goose.DialectPostgres
			if be == "sqlite" {
				d = goose.DialectSQLite3
			}
			p, err := goose.NewProvider(d, s.SQL(), fsys)
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.DownTo(ctx, 21)
			for _, r := range res {
				t.Logf("down %v", r)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.UpTo(ctx, 26); err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, src := range p.ListSources() {
				if src.Version > 26 {
					want++
				}
			}
			n, err := s.Migrate(ctx)
			if err != nil || n != want {
				t.Fatalf("the schema up to 26, then Migrate: %d %v, want the %d after it", n, err, want)
			}
		})
	}
}
