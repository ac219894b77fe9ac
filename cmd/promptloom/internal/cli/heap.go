package cli

import (
	"os"
	"runtime/debug"
	"sync"
)

// An explanation holds a few times its options file (the file itself,
// parsed in place, the prompt, and a fragment, a reducer row and a manifest
// segment per item), and Go's collector, at its default GOGC of 100, lets
// the heap grow well past what it last found live before collecting again.
// From largeOptionsBytes of options read, the CLI collects at GOGC 50
// instead, which keeps the peak nearer the live heap for a little more
// time (docs/performance.md has the figures). Unlike a memory limit sized
// from the input, it
// cannot make the collector run without end on an input whose items are
// many and small (whose heap is many times the input whatever is done). A
// GOGC the user set is left alone, and a small input is not touched.
const (
	largeOptionsBytes = 32 << 20
	largeGCPercent    = 50
)

// The GC percent is the process's, and Main may run in several goroutines
// at once (tests do): it is lowered while any command with a large input
// runs, and the value found before the first is put back after the last.
var heap struct {
	sync.Mutex
	large    map[*env]bool
	original int
}

// boundHeap records n more bytes of options read; once they reach
// largeOptionsBytes, the collector runs at largeGCPercent until the
// command ends, unless the user set GOGC.
func (e *env) boundHeap(n int) {
	e.optionBytes += int64(n)
	if e.optionBytes < largeOptionsBytes || os.Getenv("GOGC") != "" {
		return
	}
	heap.Lock()
	defer heap.Unlock()
	if heap.large[e] {
		return
	}
	if len(heap.large) == 0 {
		heap.large = map[*env]bool{}
		heap.original = debug.SetGCPercent(largeGCPercent)
	}
	heap.large[e] = true
}

// releaseHeap withdraws e's setting, when it made one.
func (e *env) releaseHeap() {
	heap.Lock()
	defer heap.Unlock()
	if !heap.large[e] {
		return
	}
	delete(heap.large, e)
	if len(heap.large) == 0 {
		debug.SetGCPercent(heap.original)
	}
}
