package calendar_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/carddav"

	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// fillRadicale writes n events into the Radicale calendar's storage, as
// four years of a busy shop, one in twenty a weekly series. Radicale's
// filesystem storage keeps one file per object, so the fixture is written
// there directly rather than PUT n times.
func fillRadicale(b *testing.B, r *testkit.Radicale, n int) {
	b.Helper()
	dir := r.CollectionDir()
	start := time.Date(2023, 6, 1, 9, 0, 0, 0, berlin)
	step := 4 * 365 * 24 * time.Hour / time.Duration(n)
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * step).Truncate(30 * time.Minute)
		rrule := ""
		if i%20 == 0 {
			rrule = "RRULE:FREQ=WEEKLY;COUNT=12\r\n"
		}
		ics := fmt.Sprintf("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\nUID:bench-%d\r\nDTSTAMP:20230101T000000Z\r\n"+
			"DTSTART;TZID=Europe/Berlin:%s\r\nDTEND;TZID=Europe/Berlin:%s\r\n%sSUMMARY:Walk-in %d\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
			i, at.Format("20060102T150405"), at.Add(30*time.Minute).Format("20060102T150405"), rrule, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("bench-%d.ics", i)), []byte(ics), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSync5000: a 5,000-event CalDAV calendar (Radicale) synced
// whole the first time (sync-collection without a token, then one
// calendar-query), then incrementally after one event was added: one
// sync-collection REPORT with the stored token and one calendar-multiget
// of the new object (ms/incremental-own is what Linkslot adds to the
// server's answer to that REPORT, measured beside it), then with nothing
// changed. ms/server-propfind is the PROPFIND listing a sync needed
// before sync tokens, and still needs from a server without them
// (docs/calendars.md, docs/performance.md).
func BenchmarkSync5000(b *testing.B) {
	for _, be := range sqltest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			r := testkit.StartRadicale(b)
			fillRadicale(b, r, 5000)
			// Radicale parses every file once, on the first request after
			// they were written; a server in use has done so long before.
			if _, err := webdavClient(b, r).ReadDir(ctx, "/"+r.User+"/work/", false); err != nil {
				b.Fatal(err)
			}
			// What the server alone takes to list the collection's ETags,
			// the floor of an incremental sync.
			t0 := time.Now()
			if _, err := webdavClient(b, r).ReadDir(ctx, "/"+r.User+"/work/", false); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(t0).Milliseconds()), "ms/server-propfind")
			var first, incremental, report, unchanged time.Duration
			for i := 0; i < b.N; i++ {
				f := newFixtureB(b, be.Open(b))
				f.cals.Timeout = 100 * time.Second // Radicale reads 5,000 files on the first query
				f.connectB(b, r)
				t0 := time.Now()
				res, err := f.cals.Sync(ctx, f.staffID())
				if err != nil {
					b.Fatalf("%v (%v)", err, errors.Unwrap(err))
				}
				first += time.Since(t0)
				if res.Objects < 5000 {
					b.Fatalf("first sync fetched %d objects", res.Objects)
				}
				before, err := f.s.GetStaffCalendar(ctx, f.staffID())
				if err != nil || before.SyncToken == "" {
					b.Fatalf("no sync token after the first sync (%v)", err)
				}
				put(b, r, fmt.Sprintf("bench-%d-%d.ics", i, 4321), "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//bench//EN\nBEGIN:VEVENT\nUID:bench-new-"+fmt.Sprint(i)+"\n"+
					"DTSTAMP:20260101T000000Z\nDTSTART;TZID=Europe/Berlin:20260330T100000\nDTEND;TZID=Europe/Berlin:20260330T110000\nSUMMARY:new\nEND:VEVENT\nEND:VCALENDAR\n")
				f.clock.Add(time.Minute)
				t0 = time.Now()
				res, err = f.cals.Sync(ctx, f.staffID())
				if err != nil {
					b.Fatal(err)
				}
				incremental += time.Since(t0)
				if res.Objects != 1 || res.Full || res.Listed {
					b.Fatalf("incremental sync: %+v", res)
				}
				// The server's answer to the same REPORT again, at once: the
				// machine's speed drifts, so Linkslot's own part of the
				// incremental sync is the difference of two measurements
				// taken side by side.
				t0 = time.Now()
				changes, err := syncClient(b, r).SyncCollection(ctx, "/"+r.User+"/work/", &carddav.SyncQuery{SyncToken: before.SyncToken})
				if err != nil || len(changes.Updated) != 1 {
					b.Fatalf("sync-collection: %v %+v", err, changes)
				}
				report += time.Since(t0)
				// Nothing changed: one REPORT, nothing fetched or expanded.
				f.clock.Add(time.Minute)
				t0 = time.Now()
				res, err = f.cals.Sync(ctx, f.staffID())
				if err != nil {
					b.Fatal(err)
				}
				unchanged += time.Since(t0)
				if res.Objects != 0 || res.Full || res.Listed {
					b.Fatalf("unchanged sync: %+v", res)
				}
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "ms/first-sync")
			b.ReportMetric(float64(incremental.Milliseconds())/float64(b.N), "ms/incremental-sync")
			b.ReportMetric(float64(report.Milliseconds())/float64(b.N), "ms/server-sync-report")
			b.ReportMetric(float64((incremental-report).Milliseconds())/float64(b.N), "ms/incremental-own")
			b.ReportMetric(float64(unchanged.Milliseconds())/float64(b.N), "ms/unchanged-sync")
		})
	}
}

// syncClient asks Radicale for a sync-collection REPORT as the sync does
// (go-webdav's carddav client; docs/calendars.md "Incremental").
func syncClient(t testing.TB, r *testkit.Radicale) *carddav.Client {
	c, err := carddav.NewClient(webdav.HTTPClientWithBasicAuth(nil, r.User, r.Password), r.URL())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
