package demo

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/sqlite"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/replay"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"
)

func recordRun(t *testing.T) (eventlog.Store, []byte) {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "run.db"), &eventlog.Options{Clock: NegotiationClock()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var tr bytes.Buffer
	j := journal.New(&tr, nil)
	if _, err := RecordNegotiation(context.Background(), store, j, Settings{}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil { // the session's close line: the run is whole
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(tr.Bytes()), nil)
	if err != nil || !rep.OK() || len(rep.Calls) != len(Parties)*Rounds {
		t.Fatalf("the recorded transcript does not verify: %+v %v", rep, err)
	}
	return store, tr.Bytes()
}

// Replay calls the model zero times and gives byte-identical manifests.
func TestReplayIsFaithful(t *testing.T) {
	store, tr := recordRun(t)
	r, err := ReplayNegotiation(context.Background(), store, tr, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ModelCalls != 0 || len(r.Calls) != len(Parties)*Rounds || !r.Identical() {
		t.Errorf("replay: %d model calls, %+v", r.ModelCalls, r.Calls)
	}
	// The replayed log holds the same events as the recorded one.
	rh, _ := store.Head(context.Background())
	ph, _ := r.Negotiation.Store.Head(context.Background())
	if rh != ph {
		t.Errorf("replayed log has %d events, recorded %d", ph, rh)
	}
}

// A changed rank changes the prompt where the part meets a part of its
// register it now ranks below (round 2: ranks order a register's parts):
// the replay fails there with ErrPinMiss naming the fragment whose rank
// changed, and says which calls before it kept their prompt but not their
// manifest.
func TestReplayCatchesAChangedRank(t *testing.T) {
	store, tr := recordRun(t)
	r, err := ReplayNegotiation(context.Background(), store, tr, Settings{Ranks: map[string]int{"record": 0}})
	var miss *replay.MissError
	if !errors.Is(err, replay.ErrPinMiss) || !errors.As(err, &miss) {
		t.Fatalf("replay with a changed rank: %v", err)
	}
	if miss.Call != "round-2/uk" || !miss.SystemChanged || !slices.ContainsFunc(miss.Changed, func(c manifest.Change) bool { return c.ID == "record" }) {
		t.Errorf("miss %+v", miss)
	}
	if r.ModelCalls != 0 || r.Calls[1].Identical || r.Calls[0].Call != "round-1/uk" || !r.Calls[0].Identical {
		t.Errorf("calls before the miss: %+v", r.Calls)
	}
}
