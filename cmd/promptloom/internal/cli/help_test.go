package cli

import (
	"bytes"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeStdin is a stdin whose Stat reports a given mode.
type fakeStdin struct {
	strings.Reader
	mode os.FileMode
}

func (f *fakeStdin) Stat() (os.FileInfo, error) { return fakeInfo{f.mode}, nil }

type fakeInfo struct{ mode os.FileMode }

func (i fakeInfo) Name() string       { return "stdin" }
func (i fakeInfo) Size() int64        { return 0 }
func (i fakeInfo) Mode() fs.FileMode  { return i.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return false }
func (i fakeInfo) Sys() any           { return nil }

// TestTerminalNotice: options read from a terminal say so on stderr; from a
// pipe or a file they do not.
func TestTerminalNotice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   os.FileMode
		notice bool
	}{
		{"terminal", os.ModeDevice | os.ModeCharDevice, true},
		{"pipe", os.ModeNamedPipe, false},
		{"file", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &fakeStdin{mode: tc.mode}
			in.Reset(`{"system": "x"}`)
			var out, errb bytes.Buffer
			if code := Main([]string{"explain", "--format", "raw"}, in, &out, &errb); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			got := strings.Contains(errb.String(), "reading from the terminal")
			if got != tc.notice {
				t.Errorf("notice = %v, want %v (stderr %q)", got, tc.notice, errb.String())
			}
			if out.String() != "x" {
				t.Errorf("stdout = %q, want the prompt", out.String())
			}
		})
	}
}

// TestNoTerminalNoticeForDevNull: /dev/null is a character device but no
// terminal: `explain < /dev/null` reads no terminal and says nothing of
// one (it claimed to read from the terminal).
func TestNoTerminalNoticeForDevNull(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var out, errb bytes.Buffer
	Main([]string{"explain"}, f, &out, &errb)
	if strings.Contains(errb.String(), "terminal") {
		t.Errorf("stderr %q", errb.String())
	}
}

// TestEveryCommandHasHelp: each registered command's --help prints its usage,
// one line per flag it defines, and an example, exit 0.
func TestEveryCommandHasHelp(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			if _, ok := examples[name]; !ok {
				t.Errorf("no example for %q in help.go's examples", name)
			}
			var out, errb bytes.Buffer
			if code := Main([]string{name, "--help"}, strings.NewReader(""), &out, &errb); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !strings.HasPrefix(out.String(), "usage: promptloom "+name) || !strings.Contains(out.String(), "\nexample:\n  promptloom ") {
				t.Errorf("help lacks usage or example:\n%s", out.String())
			}
			usage := strings.SplitN(out.String(), "\n", 2)[0]
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(l, "  --") && len(strings.Fields(l)) < 3 {
					t.Errorf("flag line without a description: %q", l)
				}
				// Every flag is on the usage line (explain's lacked --strict).
				if f, ok := strings.CutPrefix(l, "  --"); ok {
					f = strings.Fields(f)[0]
					if !strings.Contains(usage+" ", "--"+f+" ") && !strings.Contains(usage, "--"+f+"]") {
						t.Errorf("--%s is not on the usage line %q", f, usage)
					}
				}
			}

			// promptloom help NAME is NAME --help (it printed the general
			// help).
			var viaHelp bytes.Buffer
			if code := Main([]string{"help", name}, strings.NewReader(""), &viaHelp, &errb); code != ExitOK || viaHelp.String() != out.String() {
				t.Errorf("help %s: exit %d, printed\n%s", name, code, viaHelp.String())
			}
		})
	}
}

// The top-level help has one line per registered command, each saying what
// the command does; no summary names a command that is not registered.
func TestEveryCommandHasASummary(t *testing.T) {
	for name := range commands {
		if summaries[name] == "" {
			t.Errorf("command %s has no summary for the top-level help", name)
		}
	}
	for name := range summaries {
		if _, ok := commands[name]; !ok {
			t.Errorf("summary of %s, which is no command", name)
		}
	}
	var out bytes.Buffer
	if code := Main([]string{"help"}, strings.NewReader(""), &out, &out); code != ExitOK {
		t.Fatalf("help exited %d", code)
	}
	for name := range commands {
		if !strings.Contains(out.String(), "\n  "+name+" ") {
			t.Errorf("help has no line for %s:\n%s", name, out.String())
		}
	}
}

// A flag error names the flag as the help does, --name, not as the flag
// package prints it.
func TestFlagErrorsWriteDoubleDash(t *testing.T) {
	for _, args := range [][]string{{"explain", "--bogus"}, {"explain", "--budget", "x"}, {"explain", "--lint=maybe"}} {
		var out, errb bytes.Buffer
		if code := Main(args, strings.NewReader(""), &out, &errb); code != ExitBadArgs || !strings.Contains(errb.String(), " --"+strings.TrimLeft(strings.SplitN(args[1], "=", 2)[0], "-")) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
