package journal

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/transcript"
)

// bigManifestTranscript is a transcript of calls calls citing one large
// manifest (frags profile fragments, all gated out, so the prompt is small)
// whose system prompt is retained again on systems lines: every
// (manifest line, system_prompt line) pair is cited by calls/systems calls.
func bigManifestTranscript(tb testing.TB, frags, calls, systems int) []byte {
	tb.Helper()
	var items []string
	for i := range frags {
		items = append(items, fmt.Sprintf(`{"body": "Rule %d: %s", "requires_caps": ["language.rust"]}`, i, strings.Repeat("keep the plan current ", 4)))
	}
	e, err := explain.Explain([]byte(`{"system": "You are careful.", "context_profile": {"prompt_fragments": [`+strings.Join(items, ",")+`]}}`), nil)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "big"})
	for i := range calls {
		if i%(calls/systems) == 0 {
			delete(j.last, chain.KindSystemPrompt) // retain the prompt again: a new pair
		}
		if _, err := j.Call(ctx, echo, Request{Call: fmt.Sprintf("c%d", i), System: e.System, Manifest: e.Manifest}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// peakHeap runs f and returns the most heap its objects took meanwhile,
// above what they took before, sampled every 200µs.
func peakHeap(f func()) uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak uint64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak {
				peak = v - base
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return peak
}

// BenchmarkVerifyOneManifestManyPrompts verifies 160 calls citing one
// manifest of about 9 MB, its small prompt retained on 40 lines; it
// reports the peak heap as a multiple of the file's size (peak-x-file).
func BenchmarkVerifyOneManifestManyPrompts(b *testing.B) {
	data := bigManifestTranscript(b, 36000, 160, 40)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	verify := func() {
		rep, err := transcript.Verify(bytes.NewReader(data), nil)
		if err != nil || !rep.OK() {
			b.Fatalf("verify: %v %v", err, rep.Problems)
		}
	}
	var peak uint64
	for i := 0; b.Loop(); i++ {
		if i == 0 { // sampled once: the sampler and its collection cost time
			peak = peakHeap(verify)
			continue
		}
		verify()
	}
	b.ReportMetric(float64(peak)/float64(len(data)), "peak-x-file")
	b.ReportMetric(float64(len(data)), "file-bytes")
}

// TestVerifyLinearInPairs: a manifest cited with its prompt retained on
// many lines is read and held once per manifest line and prompt content,
// not once per (manifest line, system_prompt line) pair: what Verify
// allocates stays within a few times the file, however the lines pair.
func TestVerifyLinearInPairs(t *testing.T) {
	data := bigManifestTranscript(t, 3000, 40, 40)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	runtime.ReadMemStats(&after)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*uint64(len(data)) {
		t.Errorf("Verify allocated %d bytes for a %d-byte transcript (%.1fx): not linear in the file", got, len(data), float64(got)/float64(len(data)))
	}
	if v, _, _ := rep.Counts(); v != 40 {
		t.Errorf("%d calls verified, want 40", v)
	}
	for i := range rep.Calls[1:] {
		if c := &rep.Calls[i+1]; c.Manifest != rep.Calls[0].Manifest {
			t.Fatalf("call %d: a manifest of its own", i+1)
		}
	}
}

// TestVerifyLinearInPairsHarn: the same in a Harn transcript, one manifest
// of 3,000 rows and its prompt emitted again before each of 40 requests.
func TestVerifyLinearInPairsHarn(t *testing.T) {
	const system = "You are careful."
	mf := harnManifest("root", system)
	segs := mf["segments"].([]obj)
	for i := range 3000 {
		segs = append(segs, obj{"id": fmt.Sprintf("gated[%d]", i), "producer": "test", "bucket": "before", "included": false,
			"reason": "requires capability `language.rust` (not set)", "bytes": 0, "digest": harnHash(fmt.Sprintf("Rule %d", i))})
	}
	mf["segments"] = segs
	var w harnWriter
	for i := range 40 {
		w.lastSystem = "" // emitted again: a new (manifest line, system_prompt line) pair
		w.call(i+1, fmt.Sprintf("c%d", i), system, mf, nil, nil)
	}
	data := w.buf.Bytes()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	runtime.ReadMemStats(&after)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*uint64(len(data)) {
		t.Errorf("Verify allocated %d bytes for a %d-byte transcript (%.1fx): not linear in the file", got, len(data), float64(got)/float64(len(data)))
	}
}

// TestVerifyHarnToolSchemasOnce: tool schemas retained once (in a
// spelling only their canonical encoding re-derives) and cited by every
// call are re-derived once, not once a call.
func TestVerifyHarnToolSchemasOnce(t *testing.T) {
	const system = "You are careful."
	tools := []obj{harnTool("search", strings.Repeat("Search the repository. ", 10000))}
	var w harnWriter
	for i := range 100 {
		w.call(i+1, fmt.Sprintf("c%d", i), system, harnManifest("root", system), nil, tools)
	}
	data := strings.Replace(w.buf.String(), `"schemas":[{"`, `"schemas":[ {"`, 1) // the same value, not its bytes
	rep, err := transcript.Verify(strings.NewReader(data), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	transcript.Verify(strings.NewReader(data), nil)
	runtime.ReadMemStats(&after)
	// Re-deriving through the canonical encoding costs a few times the
	// schemas, once; once a call it was 145x the file.
	if got := after.TotalAlloc - before.TotalAlloc; got > 10*uint64(len(data)) {
		t.Errorf("Verify allocated %d bytes for a %d-byte transcript (%.1fx): the schemas re-derived once a call", got, len(data), float64(got)/float64(len(data)))
	}
}
