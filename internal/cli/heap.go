package cli

import (
	"os"
	"runtime/debug"
)

// The heap an explanation needs is about 2.7 times its options file: the
// file itself (parsed in place), the prompt, and a fragment, a reducer row
// and a manifest segment per item. Go's collector lets the heap grow to
// twice what it last found live, so on a large file the peak could reach
// well past that. The CLI knows its input's size: it sets a soft memory
// limit of heapPerInputByte times the options it has read, plus room for
// the runtime, and the collector works harder only as the heap nears it
// (at a million fragments, 442 MB, the peak above the runtime's baseline
// went from 3.24 to under 3 times the input; see docs/performance.md). A
// GOMEMLIMIT the user set is left alone; a small input never comes near
// the limit.
const (
	heapPerInputByte = 2.9
	heapRoom         = 16 << 20
)

// boundHeap records n more bytes of options read and raises the soft
// memory limit to match, unless the user set GOMEMLIMIT.
func (e *env) boundHeap(n int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	e.optionBytes += int64(n)
	limit := int64(heapPerInputByte*float64(e.optionBytes)) + heapRoom
	if e.restoreLimit == nil {
		old := debug.SetMemoryLimit(limit)
		e.restoreLimit = func() { debug.SetMemoryLimit(old) }
		return
	}
	debug.SetMemoryLimit(limit)
}
