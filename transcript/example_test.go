package transcript_test

import (
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
