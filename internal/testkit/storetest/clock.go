package storetest

import "time"

// Clock returns a clock that starts at start and ticks one second per call:
// deterministic timestamps for golden tests. It is not safe for concurrent
// use; no store calls its clock concurrently.
func Clock(start time.Time) func() time.Time {
	t := start.Add(-time.Second)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}
