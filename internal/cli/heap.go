package cli

import (
	"os"
	"runtime/debug"
	"sync"
)

// The heap an explanation needs is about 2.7 times its options file: the
// file itself (parsed in place), the prompt, and a fragment, a reducer row
// and a manifest segment per item. Go's collector lets the heap grow past
// what it last found live before it collects again, so on a large file the
// peak went past three times. The CLI knows its input's size: it sets a
// soft memory limit of heapPerInputByte times the options it has read,
// plus room for the runtime, and the collector works harder only as the
// heap nears it (at a million fragments, 442 MB, the peak above the
// runtime's baseline went from 3.19 to 2.88 times the input, for about 10%
// more time; see docs/performance.md). A GOMEMLIMIT the user set is left
// alone; a small input never comes near the limit.
const (
	heapPerInputByte = 2.9
	heapRoom         = 16 << 20
)

// The limit is the process's, and Main may run in several goroutines at
// once (tests do): the limit in force is the largest any running command
// asked for, and the one found before the first is put back after the
// last.
var heap struct {
	sync.Mutex
	wanted   map[*env]int64
	original int64
}

// boundHeap records n more bytes of options read and raises the soft
// memory limit to match, unless the user set GOMEMLIMIT.
func (e *env) boundHeap(n int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	e.optionBytes += int64(n)
	heap.Lock()
	defer heap.Unlock()
	if len(heap.wanted) == 0 {
		heap.wanted = map[*env]int64{}
		heap.original = debug.SetMemoryLimit(-1)
	}
	heap.wanted[e] = int64(heapPerInputByte*float64(e.optionBytes)) + heapRoom
	setHeapLimit()
}

// releaseHeap withdraws e's limit, when it set one.
func (e *env) releaseHeap() {
	heap.Lock()
	defer heap.Unlock()
	if _, ok := heap.wanted[e]; !ok {
		return
	}
	delete(heap.wanted, e)
	if len(heap.wanted) == 0 {
		debug.SetMemoryLimit(heap.original)
		return
	}
	setHeapLimit()
}

// setHeapLimit sets the largest limit wanted (heap held).
func setHeapLimit() {
	var limit int64
	for _, l := range heap.wanted {
		limit = max(limit, l)
	}
	debug.SetMemoryLimit(limit)
}
