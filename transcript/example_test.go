package transcript_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

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

// Each line of a transcript decodes to its kind, the session and call it
// names, and its place in the chain.
func ExampleDecode() {
	data, err := os.ReadFile("testdata/example.jsonl")
	if err != nil {
		panic(err)
	}
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")[:4] {
		l, err := transcript.Decode([]byte(strings.TrimSuffix(line, "\n")))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %s %q %q\n", l.Seq, l.Kind, l.Session, l.Call)
	}
	_, err = transcript.Decode([]byte(`{"prev":"blake3:00","seq":"1","kind":"journal_open","at":"2026-01-02T03:04:05Z"}`))
	fmt.Println(errors.Is(err, transcript.RuleSeq))
	// Output:
	// 1 journal_open "s1" ""
	// 2 system_prompt "" ""
	// 3 context_manifest "" ""
	// 4 provider_call_request "s1" "c1"
	// true
}
