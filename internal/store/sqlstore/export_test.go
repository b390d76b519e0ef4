package sqlstore

import "context"

// MigrateTo applies the migrations up to and including version, for
// upgrade tests that fill a database with an older schema first.
func MigrateTo(ctx context.Context, s *Store, version int64) error {
	p, err := s.goose()
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}
