package calendar_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// event is a one-hour event in Berlin starting at local (20060102T150405).
func event(uid, local string) string {
	at, err := time.ParseInLocation("20060102T150405", local, berlin)
	if err != nil {
		panic(err)
	}
	return "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\nBEGIN:VEVENT\nUID:" + uid + "\nDTSTAMP:20260301T000000Z\n" +
		"DTSTART;TZID=Europe/Berlin:" + local + "\nDTEND;TZID=Europe/Berlin:" + at.Add(time.Hour).Format("20060102T150405") +
		"\nSUMMARY:" + uid + "\nEND:VEVENT\nEND:VCALENDAR\n"
}

// TestCalDAVSyncToken: after the first sync stores Radicale's sync token,
// a sync with nothing changed fetches nothing; one after an event was
// added, one changed and one deleted fetches exactly those two (one
// sync-collection REPORT and one calendar-multiget) and removes the third,
// with a new token; the window moving a day re-expands the stored objects
// without listing the collection; a stored token the server no longer
// knows falls back to listing the whole collection, logged once, and a
// fresh token is stored; setting the calendar again clears the token.
func TestCalDAVSyncToken(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
		var logs testkit.SyncBuffer
		f.cals.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		reg := prometheus.NewRegistry()
		f.cals.Metrics = calendar.NewMetrics(reg)
		f.connect(t, r)
		put(t, r, "keep.ics", event("keep-1", "20260323T100000"))
		put(t, r, "change.ics", event("change-1", "20260323T120000"))
		put(t, r, "gone.ics", event("gone-1", "20260323T140000"))
		res, err := f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		first, _ := s.GetStaffCalendar(ctx, f.staffID())
		if res.Objects != 3 || !res.Listed || !res.Full || first.SyncToken == "" || first.Busy != 3 {
			t.Fatalf("first sync %+v, token %q, %d busy times", res, first.SyncToken, first.Busy)
		}
		if strings.Contains(logs.String(), "refused") {
			t.Fatalf("Radicale offers sync-collection, yet: %s", logs.String())
		}
		day := f.slots(t, "2026-03-23")
		if has(day, "10:00") || has(day, "12:00") || has(day, "14:00") || !has(day, "11:00") || !has(day, "15:00") {
			t.Fatalf("23 March after the first sync: %v", day)
		}

		// (b) Nothing changed: nothing fetched, the sync recorded.
		f.clock.Add(time.Minute)
		res, err = f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		c, _ := s.GetStaffCalendar(ctx, f.staffID())
		if res.Objects != 0 || res.Removed != 0 || res.Listed || res.Full || res.Busy != 3 || c.SyncToken == "" ||
			!c.SyncedAt.Equal(f.clock.Now()) {
			t.Fatalf("unchanged sync %+v, calendar %+v", res, c)
		}

		// (a) One event added, one changed, one deleted in the calendar.
		put(t, r, "new.ics", event("new-1", "20260324T100000"))
		put(t, r, "change.ics", event("change-1", "20260323T150000"))
		if err := webdavClient(t, r).RemoveAll(ctx, "/"+r.User+"/work/gone.ics"); err != nil {
			t.Fatal(err)
		}
		f.clock.Add(time.Minute)
		res, err = f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		after, _ := s.GetStaffCalendar(ctx, f.staffID())
		if res.Objects != 2 || res.Removed != 1 || res.Listed || res.Full || res.Busy != 3 || after.Busy != 3 || after.Objects != 3 {
			t.Fatalf("incremental sync %+v, calendar: %d objects, %d busy times", res, after.Objects, after.Busy)
		}
		if after.SyncToken == "" || after.SyncToken == c.SyncToken {
			t.Fatalf("the token did not change: %q, before %q", after.SyncToken, c.SyncToken)
		}
		// Counted: the first sync listed and changed, the unchanged one and
		// this one read by the token.
		if got := []float64{metricValue(t, reg, "linkslot_calendar_syncs_total", "caldav", "changed"),
			metricValue(t, reg, "linkslot_calendar_syncs_total", "caldav", "unchanged"),
			metricValue(t, reg, "linkslot_calendar_sync_seconds", "caldav", "listing"),
			metricValue(t, reg, "linkslot_calendar_sync_seconds", "caldav", "changes")}; fmt.Sprint(got) != "[2 1 1 2]" {
			t.Fatalf("syncs changed, unchanged, timed listing, timed changes = %v, want [2 1 1 2]", got)
		}
		day = f.slots(t, "2026-03-23")
		if has(day, "10:00") || !has(day, "12:00") || !has(day, "14:00") || has(day, "15:00") || has(day, "15:30") || !has(day, "16:00") {
			t.Fatalf("23 March after the incremental sync: %v", day)
		}
		if sl := f.slots(t, "2026-03-24"); has(sl, "10:00") || !has(sl, "11:00") {
			t.Fatalf("24 March after the incremental sync: %v", sl)
		}
		objs, _ := s.ListCalendarObjects(ctx, f.staffID(), false)
		var hrefs []string
		for _, o := range objs {
			hrefs = append(hrefs, o.Href)
		}
		if strings.Join(hrefs, " ") != "/owner/work/change.ics /owner/work/keep.ics /owner/work/new.ics" {
			t.Fatalf("stored objects %v", hrefs)
		}

		// The window moves a day: the stored objects are expanded again
		// from their text; the token still says what changed (nothing).
		f.clock.Add(25 * time.Hour)
		res, err = f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		if res.Objects != 0 || res.Removed != 0 || res.Listed || !res.Full || res.Busy != 3 {
			t.Fatalf("sync after the window moved: %+v", res)
		}
		if sl := f.slots(t, "2026-03-23"); has(sl, "10:00") || has(sl, "15:00") || !has(sl, "12:00") {
			t.Fatalf("23 March after the window moved: %v", sl)
		}

		// (c) A token the server does not know (expired, or corrupted):
		// the whole collection is listed, and a fresh token stored.
		cur, _ := s.GetStaffCalendar(ctx, f.staffID())
		bad := "http://radicale.org/ns/sync/" + strings.Repeat("0", 64)
		if err := s.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: f.staffID(), At: f.clock.Now(), CollectionTag: cur.CollectionTag,
			SyncToken: bad, WindowStart: cur.WindowStart, WindowEnd: cur.WindowEnd}); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.GetStaffCalendar(ctx, f.staffID()); c.SyncToken != bad || c.Busy != 3 {
			t.Fatalf("corrupted: %+v", c)
		}
		if err := webdavClient(t, r).RemoveAll(ctx, "/"+r.User+"/work/keep.ics"); err != nil {
			t.Fatal(err)
		}
		logs.Reset()
		f.clock.Add(time.Minute)
		res, err = f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		fresh, _ := s.GetStaffCalendar(ctx, f.staffID())
		if !res.Listed || res.Objects != 0 || res.Removed != 1 || res.Busy != 2 || fresh.Busy != 2 || fresh.LastError != "" {
			t.Fatalf("sync with a corrupted token %+v, calendar %+v", res, fresh)
		}
		if fresh.SyncToken == "" || fresh.SyncToken == bad {
			t.Fatalf("no fresh token: %q", fresh.SyncToken)
		}
		if got := logs.String(); strings.Count(got, "refused sync-collection") != 1 || !strings.Contains(got, "HTTP 403") ||
			strings.Contains(got, r.Password) || strings.Contains(got, bad) {
			t.Fatalf("log of the fallback: %s", got)
		}
		if sl := f.slots(t, "2026-03-23"); !has(sl, "10:00") || has(sl, "15:00") {
			t.Fatalf("23 March after the fallback: %v", sl)
		}
		// And the fresh token is used at the next sync.
		f.clock.Add(time.Minute)
		if res, err = f.cals.Sync(ctx, f.staffID()); err != nil || res.Listed || res.Objects != 0 {
			t.Fatalf("sync after the fallback: %+v %v", res, err)
		}
		// Setting the calendar again starts without a token.
		f.connect(t, r)
		if c, _ := s.GetStaffCalendar(ctx, f.staffID()); c.SyncToken != "" || c.CollectionTag != "" || c.SyncedAt != nil {
			t.Fatalf("set again: %+v", c)
		}
		if res, err = f.cals.Sync(ctx, f.staffID()); err != nil || !res.Listed || res.Objects != 2 {
			t.Fatalf("first sync after setting it again: %+v %v", res, err)
		}
	})
}

// TestCalDAVWithoutSyncCollection: a server that refuses the
// sync-collection REPORT (here Radicale behind a proxy answering it 501)
// is listed with a PROPFIND at every sync, no token is stored, and an
// incremental sync still fetches only what changed.
func TestCalDAVWithoutSyncCollection(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		target, _ := url.Parse(r.URL())
		target.Path = ""
		proxy := httputil.NewSingleHostReverseProxy(target)
		var refusedReports int
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method == "REPORT" {
				body, _ := io.ReadAll(req.Body)
				if bytes.Contains(body, []byte("sync-collection")) {
					mu.Lock()
					refusedReports++
					mu.Unlock()
					http.Error(w, "sync-collection is not supported", http.StatusNotImplemented)
					return
				}
				req.Body = io.NopCloser(bytes.NewReader(body))
				req.ContentLength = int64(len(body))
			}
			proxy.ServeHTTP(w, req)
		}))
		defer srv.Close()
		f := newFixture(t, s)
		var logs testkit.SyncBuffer
		f.cals.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		if err := f.cals.Set(ctx, calendar.Connect{StaffID: f.staffID(), BusinessID: f.cat.Business.ID, Kind: store.CalendarCalDAV,
			URL: srv.URL + "/" + r.User + "/work/", Username: r.User, Password: r.Password}); err != nil {
			t.Fatal(err)
		}
		put(t, r, "walkin.ics", event("walkin-1", "20260323T100000"))
		put(t, r, "other.ics", event("other-1", "20260323T120000"))
		res, err := f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		c, _ := s.GetStaffCalendar(ctx, f.staffID())
		if res.Objects != 2 || !res.Listed || c.SyncToken != "" || c.Busy != 2 || refusedReports != 1 {
			t.Fatalf("first sync %+v, token %q, %d refused", res, c.SyncToken, refusedReports)
		}
		if got := logs.String(); strings.Count(got, "refused sync-collection") != 1 || !strings.Contains(got, "HTTP 501") ||
			strings.Contains(got, r.Password) {
			t.Fatalf("log: %s", got)
		}
		if err := webdavClient(t, r).RemoveAll(ctx, "/"+r.User+"/work/walkin.ics"); err != nil {
			t.Fatal(err)
		}
		put(t, r, "other.ics", event("other-1", "20260323T130000"))
		f.clock.Add(time.Minute)
		res, err = f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		if res.Objects != 1 || res.Removed != 1 || !res.Listed || res.Full {
			t.Fatalf("incremental sync without a token: %+v", res)
		}
		if sl := f.slots(t, "2026-03-23"); !has(sl, "10:00") || !has(sl, "12:00") || has(sl, "13:00") {
			t.Fatalf("23 March: %v", sl)
		}
		f.clock.Add(time.Minute)
		if res, err = f.cals.Sync(ctx, f.staffID()); err != nil || res.Objects != 0 || !res.Listed {
			t.Fatalf("unchanged sync without a token: %+v %v", res, err)
		}
	})
}
