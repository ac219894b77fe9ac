package postgres

import (
	"context"
	"testing"
	"time"
)

// awaitBlocked waits until some backend is (want true) or no backend is
// (want false) waiting on a lock the backend pid holds, as the server's own
// pg_blocking_pids says: where a test must know that an append is blocked,
// or no longer is, it asks the server instead of sleeping and hoping.
func awaitBlocked(ctx context.Context, t *testing.T, s *store, pid uint32, want bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, int(pid)).Scan(&n)
		if err == nil && (n > 0) == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for a backend blocked by %d to be %v: %v (last error %v)", pid, want, ctx.Err(), err)
		case <-tick.C:
		}
	}
}
