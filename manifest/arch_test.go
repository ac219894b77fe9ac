package manifest_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/manifest"
)

// A manifest's content hash must not depend on the machine that computed
// it. CI runs this package again as a 386 program where the kernel runs
// one; where it does not, this test still holds the amd64 build to a 386
// build's bytes: testdata/arch-386.txt is written only by a 386 build
// (go test -run TestArchVectors -arch-write, with GOARCH=386), and every
// build on every architecture must reproduce it line for line.
var archWrite = flag.Bool("arch-write", false, "write testdata/arch-386.txt (only a GOARCH=386 build may)")

const archFile = "testdata/arch-386.txt"

// archCase is one deterministic prompt: fragments, options and a call role
// drawn from a fixed seed, so a 32-bit and a 64-bit build see the same
// inputs (math/rand/v2's PCG is defined on uint64 arithmetic alike on both).
func archCase(i int) ([]promptloom.Fragment, *promptloom.Options, string) {
	r := rand.New(rand.NewPCG(uint64(i), 41))
	words := []string{"careful", "tool", "café", "漢字", "sk-proj-" + strings.Repeat("a1B2", 12), "ghp_" + strings.Repeat("x9", 18), "\n", "  ", "emoji 🧵", "https://user:pw@example.com/x?token=abc", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2ln", "line\r\nbreak", ""}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	tools := []string{"read", "write", "search", "shell"}
	caps := []string{"net", "fs"}
	var frags []promptloom.Fragment
	if r.IntN(4) > 0 {
		frags = append(frags, promptloom.Primary(text(1+r.IntN(30))))
	}
	for k := range r.IntN(6) {
		b := promptloom.Before
		if r.IntN(2) == 0 {
			b = promptloom.After
		}
		f := promptloom.SystemItem(k, text(r.IntN(3)), text(r.IntN(40)), b)
		f.Register = budget.Register(r.IntN(4))
		f.Rank = r.IntN(5) - 2
		if r.IntN(3) == 0 {
			f.RequiresCaps = []string{caps[r.IntN(len(caps))]}
		}
		if r.IntN(4) == 0 {
			f.Sources = []string{fmt.Sprintf("event:%d", r.IntN(1<<30))}
		}
		frags = append(frags, f)
	}
	for _, t := range tools {
		if r.IntN(2) == 0 {
			g := promptloom.ToolGuidance(t, text(1+r.IntN(20)))
			g.Register = budget.Register(1 + r.IntN(3))
			frags = append(frags, g)
		}
	}
	o := &promptloom.Options{}
	for _, t := range tools {
		if r.IntN(3) > 0 {
			o.Tools = append(o.Tools, t)
		}
	}
	if r.IntN(2) == 0 {
		o.Capabilities = []string{caps[r.IntN(len(caps))]}
	}
	switch r.IntN(4) {
	case 1:
		o.Budget = &budget.Budget{Counter: budget.Bytes(), Unlimited: true}
	case 2:
		// Totals up to the largest int a 32-bit build holds.
		totals := []int{0, 40, 600, 2000, 1 << 20, 1<<31 - 1}
		o.Budget = &budget.Budget{Counter: budget.Bytes(), Total: totals[r.IntN(len(totals))]}
	case 3:
		c, err := budget.NewCounter("o200k_base")
		if err != nil {
			panic(err)
		}
		o.Budget = &budget.Budget{Counter: c, Total: 50 + r.IntN(1000)}
	}
	roles := []string{"", "agent", "reviewer"}
	return frags, o, roles[r.IntN(len(roles))]
}

// archLine is one case's outcome: the content hash, or the reducer's error.
func archLine(i int) string {
	frags, o, role := archCase(i)
	red, err := promptloom.Reduce(frags, o)
	if err != nil {
		return fmt.Sprintf("%d error %v", i, err)
	}
	m := manifest.New(red, role)
	h, err := m.ContentHash()
	if err != nil {
		return fmt.Sprintf("%d error %v", i, err)
	}
	return fmt.Sprintf("%d %s %d", i, h, len(red.System))
}

const archCases = 400

func TestArchVectors(t *testing.T) {
	var got bytes.Buffer
	fmt.Fprintf(&got, "# written by a GOARCH=386 build: go test ./manifest -run TestArchVectors -arch-write\n")
	for i := range archCases {
		got.WriteString(archLine(i))
		got.WriteByte('\n')
	}
	if *archWrite {
		if runtime.GOARCH != "386" {
			t.Fatalf("-arch-write on %s: only a 386 build writes %s, so that it holds another architecture's bytes", runtime.GOARCH, archFile)
		}
		if err := os.WriteFile(archFile, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(archFile)
	if err != nil {
		t.Fatal(err)
	}
	ws, gs := bufio.NewScanner(bytes.NewReader(want)), bufio.NewScanner(&got)
	errs, shed := 0, 0
	for ws.Scan() {
		if !gs.Scan() {
			t.Fatalf("%s: %s has more lines than this build's %d cases", runtime.GOARCH, archFile, archCases)
		}
		if ws.Text() != gs.Text() {
			t.Errorf("%s differs from the 386 build:\n 386: %s\n %s: %s", runtime.GOARCH, ws.Text(), runtime.GOARCH, gs.Text())
		}
		if strings.Contains(ws.Text(), " error ") {
			errs++
		}
	}
	if gs.Scan() {
		t.Fatalf("%s: this build has more cases than %s", runtime.GOARCH, archFile)
	}
	for i := range archCases {
		frags, o, _ := archCase(i)
		if red, err := promptloom.Reduce(frags, o); err == nil {
			for _, row := range red.Rows {
				if row.Shed {
					shed++
				}
			}
		}
	}
	// The cases must reach the budget's shedding and the reducer's errors,
	// or they no longer test what differs between word sizes.
	if shed == 0 || errs == archCases {
		t.Errorf("the cases shed %d fragment(s) and %d of %d failed: they no longer exercise the budget", shed, errs, archCases)
	}
}
