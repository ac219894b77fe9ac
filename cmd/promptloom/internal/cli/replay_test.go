package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replay --transcript T --assemble shows each recorded call beside itself
// assembled, saves each assembled body with --write, and refuses what it
// cannot do by naming the flag.
func TestReplayAssemble(t *testing.T) {
	path := agentTranscript(t)
	dir := t.TempDir()
	code, out, errOut := run(t, "replay", "--transcript", path, "--assemble", "--window", "48000", "--write", dir, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Window int `json:"window"`
		Calls  []struct {
			Call     string `json:"call"`
			Recorded struct {
				Tokens int `json:"input_tokens"`
			} `json:"recorded"`
			Assembled struct {
				Tokens int `json:"input_tokens"`
			} `json:"assembled"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Window != 48000 || len(got.Calls) != 6 {
		t.Fatalf("window %d, %d call(s): %s", got.Window, len(got.Calls), out)
	}
	for i, c := range got.Calls {
		if want := "turn-" + string(rune('1'+i)); c.Call != want || c.Recorded.Tokens == 0 || c.Assembled.Tokens == 0 {
			t.Errorf("call %d: %+v", i, c)
		}
	}
	bodies, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(bodies) != 6 {
		t.Fatalf("--write saved %d bodies (%v)", len(bodies), err)
	}
	for _, b := range bodies {
		data, err := os.ReadFile(b)
		if err != nil || !json.Valid(data) {
			t.Errorf("%s: not a JSON body (%v)", b, err)
		}
	}
	if code, out, _ := run(t, "replay", "--transcript", path, "--assemble"); code != ExitOK || !strings.Contains(out, "as assembled, hit rate") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--assemble"}, "--transcript"},
		{[]string{"replay", "--transcript", path}, "--assemble"},
		{[]string{"replay", "--transcript", path, "--assemble", "extra.json"}, "takes no FILE"},
	} {
		if code, _, errOut := run(t, c.args...); code != ExitBadArgs || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
}

// --write makes its directory, and a proxied call's name (SESSION/N) is a
// file name; explain without --request on such a call says --request
// explains it.
func TestReplayWritesIntoANewDirectory(t *testing.T) {
	path := agentTranscript(t)
	dir := filepath.Join(t.TempDir(), "new", "bodies")
	if code, _, errOut := run(t, "replay", "--transcript", path, "--assemble", "--write", dir); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if bodies, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(bodies) != 6 {
		t.Errorf("%d bodies written", len(bodies))
	}
	if code, _, errOut := run(t, "explain", "--transcript", path, "--call", "turn-2"); code != ExitBadArgs || !strings.Contains(errOut, "--request explains its whole request") {
		t.Errorf("explain of a proxied call: exit %d: %s", code, errOut)
	}
}
