package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/linkslot/linkslot/internal/testkit"
)

// The performance targets are set on a pool of 4 connections, where
// every connection is in use all the time while the cores are not all
// busy: the connections set the rate. A watcher shows, for each window
// on it, where those connections' time goes, so that the report says why
// a rate is what it is instead of leaving it to be remembered: how many
// connections database/sql had handed out, and, from pg_stat_activity,
// how many of the pool's PostgreSQL backends were executing, waiting for
// the WAL flush of a commit, waiting on something else (a lock, a read),
// or idle waiting for the Go process to read a result or send the next
// statement; and the process's CPU time per operation, which sets how
// long those waits are.

// connWatchEvery is the sampling interval: often enough for a thousand
// samples in a target's windows, seldom enough that the watcher's own
// statement costs PostgreSQL about one per cent of a core.
const connWatchEvery = 10 * time.Millisecond

// watcher samples pools of one database on a connection of its own.
type watcher struct {
	admin *sql.DB
}

// newWatcher opens the watcher's own one-connection pool on dsn.
func newWatcher(dsn string) (*watcher, error) {
	db, err := sql.Open("pgx", withAppName(dsn, "bench-watcher"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &watcher{admin: db}, nil
}

func (w *watcher) Close() { w.admin.Close() }

// withAppName is dsn with its connections' application_name set to app,
// which the watcher finds them by.
func withAppName(dsn, app string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// pool is one pool to watch: its database/sql handle, and the
// application_name its connections carry.
type pool struct {
	w   *watcher
	db  *sql.DB
	app string
}

// connShare sums a pool's samples; each field divided by Samples is the
// average number of connections in that state.
type connShare struct {
	Samples               int
	Open, InUse           int // database/sql: open, handed out
	Exec, WAL, Wait, Idle int // PostgreSQL: on CPU, WAL flush, other waits, waiting for the client
	// The process's CPU time (server and load generator alike) over the
	// windows, and the operations they completed.
	CPU time.Duration
	Ops int
}

func (c *connShare) add(o connShare) {
	c.Samples += o.Samples
	c.Open += o.Open
	c.InUse += o.InUse
	c.Exec += o.Exec
	c.WAL += o.WAL
	c.Wait += o.Wait
	c.Idle += o.Idle
	c.CPU += o.CPU
	c.Ops += o.Ops
}

func (c connShare) String() string {
	if c.Samples == 0 {
		return "no samples"
	}
	avg := func(n int) float64 { return float64(n) / float64(c.Samples) }
	return fmt.Sprintf("process CPU %.2f ms/op; in use %.2f of %.0f; executing %.2f, WAL flush %.2f, other waits %.2f, waiting for the Go process %.2f",
		msf(c.CPU)/float64(max(c.Ops, 1)), avg(c.InUse), avg(c.Open), avg(c.Exec), avg(c.WAL), avg(c.Wait), avg(c.Idle))
}

// activityQuery counts the pool's backends by what they are doing. A
// backend reading a statement's rest (ClientRead while active) or idle in
// a transaction waits for the client too.
const activityQuery = `SELECT
 count(*) FILTER (WHERE state = 'active' AND wait_event IS NULL),
 count(*) FILTER (WHERE state = 'active' AND wait_event LIKE 'WAL%'),
 count(*) FILTER (WHERE state = 'active' AND wait_event NOT LIKE 'WAL%' AND wait_event <> 'ClientRead'),
 count(*) FILTER (WHERE state <> 'active' OR wait_event = 'ClientRead')
FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`

// watch samples p every connWatchEvery until the returned stop is called
// with the operations the window completed; stop answers the sums and the
// process's CPU time over the window.
func (p *pool) watch(ctx context.Context) (stop func(ops int) connShare) {
	var (
		sum  connShare
		done = make(chan struct{})
		wg   sync.WaitGroup
		cpu0 = testkit.ProcessCPU()
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(connWatchEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var s connShare
			err := p.w.admin.QueryRowContext(ctx, activityQuery, p.app).Scan(&s.Exec, &s.WAL, &s.Wait, &s.Idle)
			if err != nil {
				continue
			}
			st := p.db.Stats()
			s.Samples, s.Open, s.InUse = 1, st.OpenConnections, st.InUse
			sum.add(s)
		}
	}()
	return func(ops int) connShare {
		close(done)
		wg.Wait()
		sum.CPU, sum.Ops = testkit.ProcessCPU()-cpu0, ops
		return sum
	}
}

// connShares is every watched window's sums, by workload/backend/workers,
// in the order they were first measured.
var connShares []struct {
	key string
	connShare
}

func recordShare(key string, s connShare) {
	for i := range connShares {
		if connShares[i].key == key {
			connShares[i].add(s)
			return
		}
	}
	connShares = append(connShares, struct {
		key string
		connShare
	}{key, s})
}
