package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/replay"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"
)

// RecordNegotiation runs the negotiation with the scripted model behind a
// pinned model in record mode: each answer is pinned as an event in store
// (the run's own log) and each call recorded in j.
func RecordNegotiation(ctx context.Context, store eventlog.Store, j *journal.Journal, set Settings) (*Negotiation, error) {
	pinned, err := replay.New(ctx, &ScriptedModel{}, &replay.Options{Log: store})
	if err != nil {
		return nil, err
	}
	set.Journal = j
	return RunNegotiation(ctx, store, pinned, set)
}

// Replay is a rerun of a recorded negotiation.
type Replay struct {
	Negotiation *Negotiation
	// ModelCalls counts the calls that reached the model: zero for a
	// faithful replay.
	ModelCalls int
	Calls      []ReplayedCall
}

// ReplayedCall compares one call's manifest with the recorded one.
type ReplayedCall struct {
	Call             string        `json:"call"`
	RecordedManifest digest.Digest `json:"recorded_manifest"`
	ReplayedManifest digest.Digest `json:"replayed_manifest"`
	Identical        bool          `json:"identical"`
	// Changes lists the fragments whose rows differ from the recorded
	// manifest's, when it is not identical.
	Changes []string `json:"changes,omitempty"`
}

// ReplayNegotiation reruns a recorded negotiation offline: a fresh log, the
// recorded log's pins in strict mode, and a model that fails if it is ever
// reached. Each call's manifest is compared, as the call is made, with the
// recorded transcript's. A call whose request was not pinned (a changed
// rank that changed what was shed, a changed brief) fails with
// replay.ErrPinMiss naming the fragments that changed; the calls replayed
// before it are returned with the error.
func ReplayNegotiation(ctx context.Context, recorded eventlog.Store, transcript []byte, set Settings) (*Replay, error) {
	unreachable := &countingModel{}
	log := eventlog.NewMemory(&eventlog.Options{Clock: NegotiationClock()})
	pinned, err := replay.New(ctx, unreachable, &replay.Options{Strict: true, Log: log, Recorded: recorded})
	if err != nil {
		return nil, err
	}
	want := recordedManifests(transcript)
	r := &Replay{}
	compare := journal.ModelFunc(func(ctx context.Context, req journal.Request) (journal.Response, error) {
		rc := ReplayedCall{Call: req.Call}
		if rec, ok := want[req.Call]; ok {
			rc.RecordedManifest = rec.hash
			rc.ReplayedManifest, _ = req.Manifest.ContentHash()
			rc.Identical = rc.RecordedManifest == rc.ReplayedManifest
			for _, c := range manifest.Differing(rec.manifest.Rows(), req.Manifest.Rows()) {
				rc.Changes = append(rc.Changes, c.String())
			}
		}
		r.Calls = append(r.Calls, rc)
		return pinned.Complete(ctx, req)
	})
	r.Negotiation, err = RunNegotiation(ctx, log, compare, set)
	r.ModelCalls = unreachable.calls
	return r, err
}

// Identical reports whether every call's manifest is the recorded one and
// no model was called.
func (r *Replay) Identical() bool {
	for _, c := range r.Calls {
		if !c.Identical {
			return false
		}
	}
	return r.ModelCalls == 0
}

// WriteText reports the replay call by call.
func (r *Replay) WriteText(w io.Writer) error {
	for _, c := range r.Calls {
		verdict := "identical"
		if !c.Identical {
			verdict = "DIFFERENT from recorded " + c.RecordedManifest.String()
			if len(c.Changes) > 0 {
				verdict += ": " + strings.Join(c.Changes, ", ")
			}
		}
		if _, err := fmt.Fprintf(w, "replayed %s: manifest content hash %s %s\n", c.Call, c.ReplayedManifest, verdict); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d call(s) replayed with %d model call(s)\n", len(r.Calls), r.ModelCalls)
	return err
}

type recordedManifest struct {
	hash     digest.Digest
	manifest *manifest.Manifest
}

// recordedManifests maps each request of a transcript to the manifest it
// names.
func recordedManifests(data []byte) map[string]recordedManifest {
	byHash := map[digest.Digest]*manifest.Manifest{}
	out := map[string]recordedManifest{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		l, err := transcript.Decode(line)
		if err != nil {
			continue
		}
		switch b := l.Body.(type) {
		case *transcript.Retained:
			if l.Kind != "context_manifest" {
				continue
			}
			if m, err := manifest.Read(b.Value); err == nil {
				byHash[b.ContentHash] = m
			}
		case *transcript.Request:
			out[l.Call] = recordedManifest{hash: b.ManifestHash, manifest: byHash[b.ManifestHash]}
		}
	}
	return out
}

// countingModel is the model of a replay: reaching it is a bug, and it is
// counted.
type countingModel struct{ calls int }

func (m *countingModel) Complete(context.Context, journal.Request) (journal.Response, error) {
	m.calls++
	return journal.Response{}, fmt.Errorf("replay reached the model")
}
