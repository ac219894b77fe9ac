package cli

import (
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// gcPercent reads the GC percent without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestHeapGCPercent: a command that has read largeOptionsBytes of options
// lowers the GC percent until it ends; with several running, it stays
// lowered until the last ends, then the original is back; a small input
// and a GOGC the user set are left alone.
func TestHeapGCPercent(t *testing.T) {
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	before := gcPercent()
	a, b, small := &env{}, &env{}, &env{}
	small.boundHeap(largeOptionsBytes - 1)
	if got := gcPercent(); got != before {
		t.Fatalf("a small input changed the GC percent to %d", got)
	}
	a.boundHeap(largeOptionsBytes / 2)
	a.boundHeap(largeOptionsBytes / 2) // two files, as diff reads them
	if got := gcPercent(); got != largeGCPercent {
		t.Fatalf("GC percent %d after a large input, want %d", got, largeGCPercent)
	}
	b.boundHeap(largeOptionsBytes)
	a.releaseHeap()
	if got := gcPercent(); got != largeGCPercent {
		t.Fatalf("GC percent %d while a large command still runs, want %d", got, largeGCPercent)
	}
	small.releaseHeap()
	b.releaseHeap()
	if got := gcPercent(); got != before {
		t.Fatalf("GC percent %d after every command ended, want the original %d", got, before)
	}

	// Through Main: the percent is back when it returns.
	path := filepath.Join(t.TempDir(), "o.json")
	if err := os.WriteFile(path, []byte(`{"system":"hello"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"explain", path}, nil, io.Discard, io.Discard); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if got := gcPercent(); got != before {
		t.Fatalf("GC percent %d after Main, want the original %d", got, before)
	}

	t.Setenv("GOGC", "200")
	c := &env{}
	c.boundHeap(largeOptionsBytes)
	if got := gcPercent(); got != before {
		t.Fatalf("GOGC set, yet the GC percent changed to %d", got)
	}
	c.releaseHeap()
}
