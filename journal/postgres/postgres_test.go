package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"
)

var ctx = context.Background()

// clock starts at 2026-11-03 and ticks a second a call.
func clock() func() time.Time {
	t := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC).Add(-time.Second)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func request(t testing.TB, call string, i int) journal.Request {
	t.Helper()
	e, err := explain.Explain([]byte(fmt.Sprintf(`{"system": ["You are careful.", "Round %d."]}`, i%4)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return journal.Request{Call: call, System: e.System, Manifest: e.Manifest,
		Messages: json.RawMessage(`[{"role":"user","content":"hello ` + call + `"}]`)}
}

var echo = journal.ModelFunc(func(_ context.Context, req journal.Request) (journal.Response, error) {
	return journal.Response{Text: "reply to " + req.Call}, nil
})

// record makes n calls through j and closes it.
func record(t testing.TB, j *journal.Journal, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := j.Call(ctx, echo, request(t, fmt.Sprintf("%s%d", prefix, i), i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// open opens a migrated store on a fresh schema, closed when the test ends.
func open(t testing.TB) (*Store, string) {
	t.Helper()
	dsn := pgtest.URL(t)
	s, err := Open(ctx, dsn, &Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dsn
}

func read(t testing.TB, s *Store, chain string) []byte {
	t.Helper()
	b, err := fs.ReadFile(s, chain)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func verify(t testing.TB, tr []byte, o *transcript.Options) *transcript.Report {
	t.Helper()
	rep, err := transcript.Verify(bytes.NewReader(tr), o)
	if err != nil || !rep.OK() {
		var b strings.Builder
		rep.WriteText(&b)
		t.Fatalf("verify: %v\n%s", err, b.String())
	}
	return rep
}

// A journal writes the same bytes to a PostgreSQL chain as to a file, and
// the chain verifies.
func TestPostgresChainIsTheFile(t *testing.T) {
	s, _ := open(t)
	var file bytes.Buffer
	record(t, journal.New(&file, &journal.Options{Clock: clock(), Session: "s1"}), "c", 5)
	record(t, journal.NewSink(s.Sink("s1"), &journal.Options{Clock: clock(), Session: "s1"}), "c", 5)
	got := read(t, s, "s1")
	if !bytes.Equal(got, file.Bytes()) {
		t.Fatalf("the chain:\n%s\nthe file:\n%s", got, file.Bytes())
	}
	if rep := verify(t, got, nil); len(rep.Calls) != 5 {
		t.Errorf("%d calls", len(rep.Calls))
	}
	st, err := fs.Stat(s, "s1")
	if err != nil || st.Size() != int64(len(got)) || st.IsDir() {
		t.Errorf("Stat: %v %v", st, err)
	}
}

// A file transcript of two sessions (one chain) is imported as one chain,
// by one Append of its lines as they are, and read back byte for byte.
func TestPostgresImportExport(t *testing.T) {
	s, _ := open(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	for _, sess := range []string{"a", "b"} {
		j, err := journal.Open(path, &journal.Options{Clock: clock(), Session: sess})
		if err != nil {
			t.Fatal(err)
		}
		record(t, j, sess, 3)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Sink("run.jsonl").Append(ctx, func(tail journal.Tail) ([]byte, error) {
		if tail.Seq != 0 {
			return nil, errors.New("the chain is not empty")
		}
		return data, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, s, "run.jsonl")
	if !bytes.Equal(got, data) {
		t.Fatalf("exported:\n%s\nimported:\n%s", got, data)
	}
	verify(t, got, nil)
	// A chain is its one sink's: a journal opened on it later is refused
	// and leaves it as it was.
	j := journal.NewSink(s.Sink("run.jsonl"), &journal.Options{Clock: clock(), Session: "c"})
	if _, err := j.Call(ctx, echo, request(t, "c0", 0)); !errors.Is(err, ErrOtherWriter) {
		t.Errorf("a second sink on an imported chain: %v, want ErrOtherWriter", err)
	}
	if got := read(t, s, "run.jsonl"); !bytes.Equal(got, data) {
		t.Errorf("the refused sink changed the chain")
	}
}

// The store is an fs.FS of its chains, as testing/fstest checks one.
func TestPostgresFS(t *testing.T) {
	s, _ := open(t)
	record(t, journal.NewSink(s.Sink("b"), &journal.Options{Session: "b"}), "c", 2)
	record(t, journal.NewSink(s.Sink("a"), &journal.Options{Session: "a"}), "c", 700) // more than a page
	if err := fstest.TestFS(s, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of no chain: %v", err)
	}
	if err := s.Sink("a/b").Append(ctx, func(journal.Tail) ([]byte, error) { return []byte("x\n"), nil }); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("a chain named a/b: %v", err)
	}
}

// A build that fails writes nothing; lines without a final newline are
// refused.
func TestPostgresFailedAppendWritesNothing(t *testing.T) {
	s, _ := open(t)
	k := s.Sink("x")
	boom := errors.New("boom")
	if err := k.Append(ctx, func(journal.Tail) ([]byte, error) { return []byte("a\n"), boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if err := k.Append(ctx, func(journal.Tail) ([]byte, error) { return []byte("a"), nil }); err == nil {
		t.Fatal("a torn line was appended")
	}
	if _, err := s.Open("x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after failed appends: %v", err)
	}
}

// Open without Migrate needs the tables; a version this build does not
// read is refused.
func TestPostgresSchema(t *testing.T) {
	dsn := pgtest.URL(t)
	if _, err := Open(ctx, dsn, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of an empty schema: %v", err)
	}
	s, err := Open(ctx, dsn, &Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE transcript_schema SET version = 2`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, o := range []*Options{nil, {Migrate: true}} {
		if _, err := Open(ctx, dsn, o); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Open (%+v) of a version-2 schema: %v", o, err)
		}
	}
}

// The privileges docs/postgres.md lists are enough: a writer's role
// appends and reads, a reader's role reads, and neither can create the
// tables.
func TestPostgresPrivileges(t *testing.T) {
	s, dsn := open(t)
	schema := searchPath(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	suffix := strings.TrimPrefix(schema, "t_")
	writer, reader := "w_"+suffix, "r_"+suffix
	for _, stmt := range []string{
		"CREATE ROLE " + writer + " LOGIN",
		"CREATE ROLE " + reader + " LOGIN",
		// docs/postgres.md, "Transcripts": the writer's privileges.
		"GRANT USAGE ON SCHEMA " + schema + " TO " + writer,
		"GRANT SELECT ON transcript_schema TO " + writer,
		"GRANT SELECT, INSERT, UPDATE ON transcript_chains TO " + writer,
		"GRANT SELECT, INSERT ON transcript_lines TO " + writer,
		// The reader's.
		"GRANT USAGE ON SCHEMA " + schema + " TO " + reader,
		"GRANT SELECT ON transcript_schema, transcript_chains, transcript_lines TO " + reader,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		for _, r := range []string{writer, reader} {
			c.Exec(ctx, "DROP OWNED BY "+r)
			c.Exec(ctx, "DROP ROLE "+r)
		}
	})
	w, err := Open(ctx, asUser(dsn, writer), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Migrating a schema already at this version changes nothing, so a
	// writer may ask for it (as `demo --record --transcript URL` does).
	wm, err := Open(ctx, asUser(dsn, writer), &Options{Migrate: true})
	if err != nil {
		t.Fatalf("the writer's Migrate of existing tables: %v", err)
	}
	wm.Close()
	record(t, journal.NewSink(w.Sink("s1"), &journal.Options{Session: "s1"}), "c", 3)
	verify(t, read(t, w, "s1"), nil)

	r, err := Open(ctx, asUser(dsn, reader), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !bytes.Equal(read(t, r, "s1"), read(t, s, "s1")) {
		t.Error("the reader reads other bytes")
	}
	if entries, err := fs.ReadDir(r, "."); err != nil || len(entries) != 1 {
		t.Errorf("the reader lists %v, %v", entries, err)
	}
	if err := r.Sink("s2").Append(ctx, func(journal.Tail) ([]byte, error) { return []byte("x\n"), nil }); err == nil {
		t.Error("the reader appended")
	}
	// Neither can create the tables in a schema that has none.
	fresh := pgtest.URL(t)
	if _, err := conn.Exec(ctx, "GRANT USAGE ON SCHEMA "+searchPath(t, fresh)+" TO "+writer); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, asUser(fresh, writer), &Options{Migrate: true}); err == nil {
		t.Error("the writer created the tables")
	}
}

func searchPath(t testing.TB, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}

func asUser(dsn, user string) string {
	u, _ := url.Parse(dsn)
	u.User = url.User(user)
	return u.String()
}

// A signed session in PostgreSQL verifies with its key, and a proof of one
// of its calls verifies on its own.
func TestPostgresSigned(t *testing.T) {
	s, _ := open(t)
	skey, vkey, err := note.GenerateKey(rand.Reader, "fleet")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	verifier, _ := note.NewVerifier(vkey)
	record(t, journal.NewSink(s.Sink("s1"), &journal.Options{Session: "s1", Signer: signer, CheckpointEvery: 4}), "c", 10)
	tr := read(t, s, "s1")
	verify(t, tr, &transcript.Options{Verifier: verifier})
	proof, rep, err := transcript.Prove(bytes.NewReader(tr), "c7", &transcript.Options{Verifier: verifier})
	if err != nil || proof == nil {
		t.Fatalf("prove c7: %v %v", err, rep.Problems)
	}
	if p, err := transcript.CheckProof(bytes.NewReader(proof), verifier, nil); err != nil || !p.OK() || p.Calls[0].Call != "c7" {
		t.Errorf("the proof: %v %+v", err, p)
	}
}

// An error of Open shows no secret pgx reads from the connection string
// (internal/dsn, shared with eventlog/postgres): ?sslpassword=, a
// ?password= holding ';', keyword=value pairs.
func TestOpenErrorShowsNoSecret(t *testing.T) {
	for _, dsn := range []string{
		"postgres://alice:s3cret@127.0.0.1:1/runs?sslpassword=s3cret2&connect_timeout=2",
		"postgres://alice@127.0.0.1:1/runs?password=s3cret;x&connect_timeout=2",
		"host=127.0.0.1 port=1 password='s3cret x' sslpassword=s3cret2 connect_timeout=2",
		"host=127.0.0.1 port=nope password='s3cret x'",
	} {
		_, err := Open(context.Background(), dsn, nil)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q): %v", dsn, err)
		}
	}
}
