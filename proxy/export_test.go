package proxy

import "time"

// SetKeepCalls sets how many calls the page keeps, for a test; it returns
// a func that puts it back.
func SetKeepCalls(n int) func() {
	old := keepCalls
	keepCalls = n
	return func() { keepCalls = old }
}

// Hooks sets the proxy's test hooks, and returns a func that clears them:
// computing is called as a session's verdicts begin to be made (outside
// the proxy's lock), making as a call's manifest begins to be made, and
// joined as a page load joins a verification under way.
func Hooks(onComputing func(session string), onMaking, onJoined func()) func() {
	hooks.Store(&testHooks{computing: onComputing, making: onMaking, joined: onJoined})
	return func() { hooks.Store(nil) }
}

// SetBodyTimeouts sets how long a request body may stall and take in
// all; it returns a func that puts them back.
func SetBodyTimeouts(idle, whole time.Duration) func() {
	oldIdle, oldWhole := bodyIdle.Swap(int64(idle)), bodyWhole.Swap(int64(whole))
	return func() { bodyIdle.Store(oldIdle); bodyWhole.Store(oldWhole) }
}

// RowsEncoded is how many rows the events have encoded so far.
func RowsEncoded() int64 { return rowsEncoded.Load() }

// BatchClock sets the clock a page's batch of events waits on (it
// replaces the other hooks meanwhile), and returns a func that clears it.
func BatchClock(f func(time.Duration) (<-chan time.Time, func() bool)) func() {
	hooks.Store(&testHooks{batch: f})
	return func() { hooks.Store(nil) }
}
