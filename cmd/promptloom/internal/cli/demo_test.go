package cli

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/pgtest"

	"github.com/google/go-cmp/cmp"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// The negotiation on a PostgreSQL log prints what it prints on a SQLite
// file, byte for byte, in both formats.
func TestNegotiationOnPostgresIsByteIdenticalToSQLite(t *testing.T) {
	dir := t.TempDir()
	for _, format := range []string{"text", "json"} {
		code, lite, stderr := run(t, "demo", "negotiation", "--format", format, "--db", filepath.Join(dir, format+".db"))
		if code != ExitOK {
			t.Fatalf("--db FILE: exit %d: %s", code, stderr)
		}
		code, pg, stderr := run(t, "demo", "negotiation", "--format", format, "--db", pgtest.URL(t))
		if code != ExitOK {
			t.Fatalf("--db URL: exit %d: %s", code, stderr)
		}
		if diff := cmp.Diff(lite, pg); diff != "" {
			t.Errorf("--format %s: PostgreSQL differs from SQLite:\n%s", format, diff)
		}
	}
}

// Record into PostgreSQL, transcript in a file; the replay from there calls
// no model and matches every manifest.
func TestRecordAndReplayOnPostgres(t *testing.T) {
	url := pgtest.URL(t)
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	code, out, stderr := run(t, "demo", "negotiation", "--record", url, "--transcript", transcript)
	if code != ExitOK {
		t.Fatalf("--record: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "recorded 6 calls: the log and its pins in "+url+", the transcript in "+transcript+"\n") {
		t.Errorf("--record output ends %q", out[max(0, len(out)-200):])
	}
	code, out, stderr = run(t, "demo", "negotiation", "--replay", url, "--transcript", transcript)
	if code != ExitOK || strings.Count(out, "identical") != 6 {
		t.Fatalf("--replay: exit %d: %s%s", code, out, stderr)
	}
	// the log is used now: a second recording is refused, and leaves no
	// transcript behind
	other := filepath.Join(t.TempDir(), "again.jsonl")
	if code, _, _ := run(t, "demo", "negotiation", "--record", url, "--transcript", other); code != ExitBadArgs {
		t.Errorf("--record over a used log: exit %d", code)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("a refused --record left its transcript behind")
	}
}

// A --record refused because the log is not empty creates no transcript,
// so once the log is replaced the retry runs ("FILE.jsonl exists" blocked
// it).
func TestRefusedRecordLeavesNothingBehind(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, log := range []string{"run.db", "q?x.db", "C#proj.db"} {
		if code, _, stderr := run(t, "demo", "negotiation", "--db", log); code != ExitOK {
			t.Fatalf("--db %s: exit %d: %s", log, code, stderr)
		}
		code, _, stderr := run(t, "demo", "negotiation", "--record", log)
		if code != ExitBadArgs || !strings.Contains(stderr, "needs an empty log") {
			t.Fatalf("--record %s over a used log: exit %d: %s", log, code, stderr)
		}
		if _, err := os.Stat(log + ".jsonl"); err == nil {
			t.Fatalf("the refused --record %s left %s.jsonl", log, log)
		}
		for _, f := range []string{log, log + "-wal", log + "-shm"} {
			os.Remove(f)
		}
		if code, _, stderr := run(t, "demo", "negotiation", "--record", log); code != ExitOK {
			t.Errorf("the retry of --record %s: exit %d: %s", log, code, stderr)
		}
		if _, err := os.Stat(log + ".jsonl"); err != nil {
			t.Errorf("the retry wrote no transcript: %v", err)
		}
	}
}

// --record into a URL says where it recorded without any secret pgx reads
// from the URL: the user's password, ?password= and ?sslpassword=.
func TestRecordOnPostgresShowsNoSecret(t *testing.T) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cret1")
	u.RawQuery += "&sslpassword=s3cret2"
	log := u.String()
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	code, out, stderr := run(t, "demo", "negotiation", "--record", log, "--transcript", transcript)
	if code != ExitOK {
		t.Fatalf("--record: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "recorded 6 calls: the log and its pins in postgres://") || strings.Contains(out+stderr, "s3cret") {
		t.Errorf("--record output ends %q", out[max(0, len(out)-300):])
	}
	// A password given as ?password= with a ';' (pgx reads it; net/url
	// would drop the pair) is not shown either.
	u.User = url.User(u.User.Username())
	u.RawQuery = strings.Replace(u.RawQuery, "sslpassword=s3cret2", "password=s3cret3;x", 1)
	code, out, stderr = run(t, "demo", "negotiation", "--record", u.String(), "--transcript", filepath.Join(t.TempDir(), "again.jsonl"))
	if code != ExitBadArgs || strings.Contains(out+stderr, "s3cret") {
		t.Errorf("--record over a used log: exit %d: %s%s", code, out, stderr)
	}
}
