package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestHarnessRuns(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`Write British English\.`,
		`harness:spelling +harness +after +yes .* capabilit\(ies\) present: locale\.en-GB`,
		`<directive authority="contract">\nNever push to main\.\n</directive>`,
		`<directive authority="corrective" ttl_turns="2">\nThe build is red: fix it before anything else\.\n</directive>`,
		`harness\.locale +harness +resolution +applied +resolved caps\.locale: en-GB`,
		`harness\.spelling +harness +compilation +applied`,
		`kernel\.prompt +kernel +compilation +no_change`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
	// The reminders are not in the system prompt.
	system := out.String()[:strings.Index(out.String(), "trailing user message")]
	if strings.Contains(system, "Never push") {
		t.Error("a reminder reached the system prompt")
	}
}

// The example builds and runs as a program, as a reader would run it.
func TestHarnessBuildsAndRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	out, err := exec.Command("go", "run", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Write British English.") {
		t.Errorf("output:\n%s", out)
	}
}
