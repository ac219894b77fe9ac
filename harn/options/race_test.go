//go:build race

package options

// raceEnabled: the race detector's build allocates more (sync.Pool keeps
// less), so allocation bounds are not checked under it.
const raceEnabled = true
