package postgres

import (
	"bytes"
	"errors"
	"testing"

	"github.com/promptloom/promptloom/journal"
)

// Two journals given one chain: the second is refused at its first call,
// whether it comes while the first still writes or after it closed, and
// the first goes on; the chain verifies as the first journal's alone.
func TestPostgresSecondWriterRefused(t *testing.T) {
	s, _ := open(t)
	first := journal.NewSink(s.Sink("run-1"), &journal.Options{Clock: clock(), Session: "run-1"})
	if _, err := first.Call(ctx, echo, request(t, "a0", 0)); err != nil {
		t.Fatal(err)
	}
	second := journal.NewSink(s.Sink("run-1"), &journal.Options{Clock: clock(), Session: "run-1"})
	if _, err := second.Call(ctx, echo, request(t, "b0", 0)); !errors.Is(err, ErrOtherWriter) {
		t.Fatalf("a second writer while the first writes: %v, want ErrOtherWriter", err)
	}
	record(t, first, "a", 3)
	after := journal.NewSink(s.Sink("run-1"), &journal.Options{Clock: clock(), Session: "run-1"})
	if _, err := after.Call(ctx, echo, request(t, "c0", 0)); !errors.Is(err, ErrOtherWriter) {
		t.Fatalf("a second writer after the first closed: %v, want ErrOtherWriter", err)
	}
	if rep := verify(t, read(t, s, "run-1"), nil); len(rep.Calls) != 4 {
		t.Errorf("%d calls, want the first journal's 4", len(rep.Calls))
	}
}

// A sink whose chain was appended to by another writer since its own last
// append is refused: the interleaving is never chained on.
func TestPostgresInterleavedWriterRefused(t *testing.T) {
	s, _ := open(t)
	a, b := s.Sink("c"), s.Sink("c")
	line := func(text string) func(journal.Tail) ([]byte, error) {
		return func(journal.Tail) ([]byte, error) { return []byte(text + "\n"), nil }
	}
	if err := a.Append(ctx, line(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(ctx, line(`{"n":2}`)); !errors.Is(err, ErrOtherWriter) {
		t.Fatalf("b's first append to a's chain: %v, want ErrOtherWriter", err)
	}
	if err := a.Append(ctx, line(`{"n":3}`)); err != nil {
		t.Fatalf("a goes on: %v", err)
	}
	// Another writer that slipped in (here a raw insert, as a process on
	// an older build would) stops a at its next append.
	if _, err := s.pool.Exec(ctx, pgInsert, "c", 2, "x", 8, [][]byte{[]byte(`{"n":9}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, line(`{"n":4}`)); !errors.Is(err, ErrOtherWriter) {
		t.Fatalf("a after another writer: %v, want ErrOtherWriter", err)
	}
	if got := read(t, s, "c"); !bytes.Equal(got, []byte("{\"n\":1}\n{\"n\":3}\n{\"n\":9}\n")) {
		t.Errorf("chain %q", got)
	}
}
