package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/cli"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"promptloom": func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI's txtar scripts in testdata/script. Set
// UPDATE_GOLDEN=1 to rewrite the golden files they compare against (then
// read the diff before committing it).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("UPDATE_GOLDEN") != "",
		// [postgres]: PROMPTLOOM_TEST_POSTGRES names a database (pgschema).
		Condition: func(cond string) (bool, error) {
			if cond == "postgres" {
				return os.Getenv("PROMPTLOOM_TEST_POSTGRES") != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"flipbyte": flipByte,
			"tamper":   tamper,
			"exitcode": exitCode,
			"untrace":  untrace,
			"pgschema": pgSchema,
			"upstream": fakeUpstream,
			"freeport": freePort,
			"waitport": waitPort,
		},
	})
}

// flipByte FILE OFFSET flips the lowest bit of one byte of a file.
func flipByte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: flipbyte FILE OFFSET")
	}
	name := ts.MkAbs(args[0])
	data, err := os.ReadFile(name)
	ts.Check(err)
	off, err := strconv.Atoi(args[1])
	ts.Check(err)
	if off < 0 || off >= len(data) {
		ts.Fatalf("offset %d outside %s (%d bytes)", off, args[0], len(data))
	}
	data[off] ^= 1
	ts.Check(os.WriteFile(name, data, 0o644))
}

// tamper FILE digest|bytes|duplicate edits the first segment of a manifest:
// a wrong digest, one byte more, or a second copy of it.
func tamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tamper FILE digest|bytes|duplicate")
	}
	name := ts.MkAbs(args[0])
	data, err := os.ReadFile(name)
	ts.Check(err)
	var m map[string]any
	ts.Check(json.Unmarshal(data, &m))
	segs := m["segments"].([]any)
	first := segs[0].(map[string]any)
	switch args[1] {
	case "digest":
		first["digest"] = "blake3:" + strings.Repeat("0", 64)
	case "bytes":
		first["bytes"] = first["bytes"].(float64) + 1
	case "duplicate":
		m["segments"] = append(segs, first)
	default:
		ts.Fatalf("unknown tampering %q", args[1])
	}
	data, err = json.Marshal(m)
	ts.Check(err)
	ts.Check(os.WriteFile(name, data, 0o644))
}

// exitcode N CMD ARGS... runs a command and checks its exit code exactly (the
// builtin ! exec only tells zero from non-zero, and diff's 1 is not its 2).
func exitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N CMD [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// untrace FILE writes the last command's stdout to FILE without its JSON
// traces member, byte for byte otherwise: the explanation as it was before
// contributors became stages.
func untrace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: untrace FILE")
	}
	out := ts.ReadFile("stdout")
	start := strings.Index(out, ",\n  \"traces\": [")
	end := strings.LastIndex(out, "\n  ]\n}")
	if start < 0 || end < start {
		ts.Fatalf("no traces member in stdout")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(out[:start]+out[end+len("\n  ]"):]), 0o644))
}

// pgschema VAR sets VAR to the URL of a new, empty schema in the database
// PROMPTLOOM_TEST_POSTGRES names, dropped when the script ends; a script
// skips its PostgreSQL part with [!postgres] skip.
func pgSchema(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgschema VAR")
	}
	base := os.Getenv("PROMPTLOOM_TEST_POSTGRES")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	ts.Check(err)
	defer conn.Close(ctx)
	schema := fmt.Sprintf("script_%d_%d", os.Getpid(), time.Now().UnixNano())
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+schema)
	ts.Check(err)
	ts.Defer(func() {
		if c, err := pgx.Connect(ctx, base); err == nil {
			c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	ts.Check(err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	ts.Setenv(args[0], u.String())
}

// upstream VAR starts a fake provider (internal/testkit/fakeprovider)
// whose Anthropic usage follows the documented cache rules
// (internal/testkit/fakecache), sets VAR to its URL, and stops it when the
// script ends.
func fakeUpstream(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: upstream VAR")
	}
	c := &fakecache.Anthropic{Min: 1024}
	up := fakeprovider.New()
	up.UsageFor(func(provider string, body []byte) (fakeprovider.Usage, bool) {
		u, err := c.Serve(body, time.Now())
		if provider != "anthropic" || err != nil {
			return fakeprovider.Usage{}, false
		}
		return fakeprovider.Usage{Input: u.Input, Output: 3, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}, true
	})
	ts.Defer(up.Close)
	ts.Setenv(args[0], up.URL)
}

// freeport VAR sets VAR to a TCP port free on loopback.
func freePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	ln.Close()
}

// waitport PORT waits (up to 20 s) until something accepts connections on
// the loopback port.
func waitPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitport PORT")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+args[0], time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens on %s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
