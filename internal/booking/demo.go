package booking

import (
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// DemoCatalogs returns the demo businesses (CONTRACT §8). Weekly hours make
// every coming week open; now only places time off relative to the demo's
// start.
func DemoCatalogs(now time.Time) []store.Catalog {
	return nil // TODO
}
