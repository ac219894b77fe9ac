package transcript_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"
)

// A transcript journal wrote (testdata/example.jsonl: one session, two
// calls) verifies; the same bytes with one reply edited do not, and the
// problem is told apart by its rule, never by its words.
func ExampleVerify() {
	data, err := os.ReadFile("testdata/example.jsonl")
	if err != nil {
		panic(err)
	}
	rep, _ := transcript.Verify(strings.NewReader(string(data)), nil)
	fmt.Println(rep.OK(), len(rep.Calls), rep.Calls[0].Call)

	edited := strings.Replace(string(data), `"text":"ok"`, `"text":"OK"`, 1)
	rep, _ = transcript.Verify(strings.NewReader(edited), nil)
	for _, p := range rep.Problems {
		fmt.Println(p.Rule == transcript.RuleChain)
	}
	// Output:
	// true 2 c1
	// true
}

// Each line of a transcript decodes to its place in the chain, its kind,
// the session and call it names, and its kind's own members, typed, in
// Body; a member of the wrong type is the rule Verify names for it.
func ExampleDecode() {
	data, err := os.ReadFile("testdata/example.jsonl")
	if err != nil {
		panic(err)
	}
	var manifestHash digest.Digest
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")[:5] {
		l, err := transcript.Decode([]byte(line))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %s %q %q: ", l.Seq, l.Kind, l.Session, l.Call)
		switch b := l.Body.(type) {
		case *transcript.Open:
			fmt.Printf("follows %q\n", b.Follows)
		case *transcript.SystemPrompt:
			fmt.Printf("%q\n", b.Content)
		case *transcript.Retained:
			m, _ := manifest.Read(b.Value)
			manifestHash = b.ContentHash
			fmt.Println(m.SystemPromptBytes, "bytes of system prompt")
		case *transcript.Request:
			fmt.Println("served the manifest above:", b.ManifestHash == manifestHash)
		case *transcript.Outcome:
			fmt.Printf("answers seq %d: %s\n", b.RequestSeq, b.Value)
		}
	}
	_, err = transcript.Decode([]byte(`{"prev":"blake3:00","seq":1,"kind":"journal_close","at":"2026-01-02T03:04:05Z","session":"s1","calls":"2"}`))
	fmt.Println(errors.Is(err, transcript.RuleCloseCount))
	// Output:
	// 1 journal_open "s1" "": follows ""
	// 2 system_prompt "" "": "You are careful."
	// 3 context_manifest "" "": 16 bytes of system prompt
	// 4 provider_call_request "s1" "c1": served the manifest above: true
	// 5 provider_call_response "s1" "c1": answers seq 4: {"text":"ok"}
	// true
}

// A Verifier is given a transcript as it is written, a piece at a time
// (here cut inside its last line), and says at each point what Verify
// says of the bytes so far, without reading them again.
func ExampleVerifier() {
	data, err := os.ReadFile("testdata/example.jsonl")
	if err != nil {
		panic(err)
	}
	v := transcript.NewVerifier(nil)
	cut := len(data) - 10
	v.Write(data[:cut])
	rep, _ := v.Report()
	fmt.Println(rep.Holds(), rep.OK(), rep.Unfinished())
	v.Write(data[cut:])
	rep, _ = v.Report()
	fmt.Println(rep.Holds(), rep.OK(), len(rep.Calls))
	// Output:
	// true false open: session s1 with 2 call(s) so far; verified through line 7
	// true true 2
}
