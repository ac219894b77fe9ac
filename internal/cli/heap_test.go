package cli

import (
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestHeapLimit: a command raises the soft memory limit in proportion to
// the options it read; with several running, the largest wanted holds;
// the limit found before the first is back after the last; a GOMEMLIMIT
// the user set is left alone.
func TestHeapLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // as if unset
	os.Unsetenv("GOMEMLIMIT")
	before := debug.SetMemoryLimit(-1)
	a, b := &env{}, &env{}
	a.boundHeap(100 << 20)
	wanted := func(n int) int64 { f := heapPerInputByte * float64(n); return int64(f) + heapRoom }
	want := wanted(100 << 20)
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Fatalf("limit %d after 100 MiB read, want %d", got, want)
	}
	b.boundHeap(1 << 20)
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Fatalf("a smaller command lowered the limit to %d (want %d)", got, want)
	}
	a.releaseHeap()
	if got, wantB := debug.SetMemoryLimit(-1), wanted(1<<20); got != wantB {
		t.Fatalf("limit %d after the larger command ended, want %d", got, wantB)
	}
	b.releaseHeap()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("limit %d after every command ended, want the original %d", got, before)
	}

	// Through Main: the limit is back when it returns.
	path := filepath.Join(t.TempDir(), "o.json")
	if err := os.WriteFile(path, []byte(`{"system":"hello"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"explain", path}, nil, io.Discard, io.Discard); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("limit %d after Main, want the original %d", got, before)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	c := &env{}
	c.boundHeap(100 << 20)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("GOMEMLIMIT set, yet the limit changed to %d", got)
	}
	c.releaseHeap()
}
