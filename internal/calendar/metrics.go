package calendar

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store"
)

// Metrics counts this process's calendar syncs and times them
// (docs/calendars.md "Watching syncs").
type Metrics struct {
	syncs    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// Sync outcomes, the values of linkslot_calendar_syncs_total's outcome.
const (
	outcomeChanged   = "changed"   // busy times or objects stored
	outcomeUnchanged = "unchanged" // nothing new: only the sync time
	outcomeFailed    = "failed"    // a last error stored, the busy times kept
)

// Ways a sync read the calendar, the values of the read label.
const (
	readChanges = "changes" // what changed since the sync token
	readListing = "listing" // the whole collection's ETags
	readFeed    = "feed"    // an iCalendar URL, whole
)

// NewMetrics registers the calendar sync collectors on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_calendar_syncs_total",
			Help: "Connected calendar syncs by this process, by kind (caldav, ics) and outcome (changed, unchanged, failed); a calendar another process was syncing is not counted.",
		}, []string{"kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "linkslot_calendar_sync_seconds",
			Help:    "Time of a good calendar sync, by kind and how it read the calendar (changes: since the sync token; listing: every ETag; feed: an iCalendar URL).",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"kind", "read"}),
	}
	for _, k := range []string{store.CalendarCalDAV, store.CalendarICS} {
		for _, o := range []string{outcomeChanged, outcomeUnchanged, outcomeFailed} {
			m.syncs.WithLabelValues(k, o)
		}
	}
	if reg != nil {
		m.syncs = metrics.Shared(reg, m.syncs)
		m.duration = metrics.Shared(reg, m.duration)
	}
	return m
}

// observe counts one sync of a calendar of kind that took took: failed
// when err is set, else changed or unchanged by what res stored.
func (m *Metrics) observe(kind string, res Result, err error, took time.Duration) {
	if m == nil {
		return
	}
	if err != nil {
		m.syncs.WithLabelValues(kind, outcomeFailed).Inc()
		return
	}
	outcome := outcomeUnchanged
	if res.Objects > 0 || res.Removed > 0 || res.Full {
		outcome = outcomeChanged
	}
	m.syncs.WithLabelValues(kind, outcome).Inc()
	read := readChanges
	switch {
	case kind == store.CalendarICS:
		read = readFeed
	case res.Listed:
		read = readListing
	}
	m.duration.WithLabelValues(kind, read).Observe(took.Seconds())
}
