package sqlstore

import "sync"

// Hook points for fault-injection tests. A hook runs inside the transaction
// at the named point; an error it returns aborts that transaction.
const (
	// HookAfterBookingWrite runs after a booking insert or update, before the
	// transaction commits.
	HookAfterBookingWrite = "after_booking_write"
)

type hooks struct {
	mu sync.RWMutex
	m  map[string]func() error
}

// SetHook installs fn at a hook point (nil removes it). For tests only.
func (s *Store) SetHook(point string, fn func() error) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	if s.hooks.m == nil {
		s.hooks.m = map[string]func() error{}
	}
	if fn == nil {
		delete(s.hooks.m, point)
		return
	}
	s.hooks.m[point] = fn
}

func (s *Store) runHook(point string) error {
	s.hooks.mu.RLock()
	fn := s.hooks.m[point]
	s.hooks.mu.RUnlock()
	if fn == nil {
		return nil
	}
	return fn()
}
