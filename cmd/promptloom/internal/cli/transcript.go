package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/demo"
	"github.com/promptloom/promptloom/internal/dsn"
	"github.com/promptloom/promptloom/internal/pgschema"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/internal/witness"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/postgres"
	"github.com/promptloom/promptloom/transcript"

	"golang.org/x/mod/sumdb/note"
)

func init() {
	register("transcript", "transcript migrate URL | transcript import FILE URL | transcript export URL", runTranscript)
	register("keygen", "keygen [--witness] NAME", runKeygen)
}

// A --transcript is a file, or a postgres:// URL naming a store of
// transcripts (package journal/postgres), one chain a session, and with
// ?session=NAME one of them.

// source is one transcript to read: a file, or a session's chain.
type source struct {
	name string // the file, or the session
	open func() (io.ReadCloser, error)
}

// transcripts returns what a --transcript names: the file, or the chains
// of the store (one, with ?session=), by name; close closes the store.
func (e *env) transcripts(ctx context.Context, arg string) (srcs []source, close func(), err error) {
	if arg == "-" {
		// Standard input, as every other input reads it: one pass, so a
		// command that reads its transcript twice cannot take it.
		return []source{{name: "-", open: func() (io.ReadCloser, error) {
			if e.stdin == nil {
				return io.NopCloser(eofReader{}), nil
			}
			e.noticeTerminal()
			return io.NopCloser(e.stdin), nil
		}}}, func() {}, nil
	}
	if err := demo.CheckPath(arg); err != nil {
		return nil, nil, err
	}
	if !demo.IsURL(arg) {
		return []source{{name: arg, open: func() (io.ReadCloser, error) { return openFile(arg) }}}, func() {}, nil
	}
	dsn, session, err := splitURL(arg)
	if err != nil {
		return nil, nil, err
	}
	store, err := openStore(ctx, dsn, arg)
	if err != nil {
		return nil, nil, err
	}
	names := []string{session}
	if session == "" {
		entries, err := fs.ReadDir(store, ".")
		if err != nil {
			store.Close()
			return nil, nil, err
		}
		names = names[:0]
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if len(names) == 0 {
			store.Close()
			return nil, nil, errors.New("the store holds no transcript")
		}
	}
	for _, name := range names {
		srcs = append(srcs, source{name: name, open: func() (io.ReadCloser, error) { return store.Open(name) }})
	}
	return srcs, func() { store.Close() }, nil
}

// openStore opens the transcript store at dsn (arg as the user gave it)
// for reading and appending; a schema without the tables says which
// command creates them, where the library names its Go option.
func openStore(ctx context.Context, dsn, arg string) (*postgres.Store, error) {
	store, err := postgres.Open(ctx, dsn, nil)
	var noSchema *pgschema.NoSchemaError
	if errors.Is(err, fs.ErrNotExist) && !errors.As(err, &noSchema) {
		return nil, fmt.Errorf("%s: no transcript tables in this schema; create them with: promptloom transcript migrate URL: %w", shown(arg), fs.ErrNotExist)
	}
	return store, err
}

// oneTranscript is what a --transcript names when a command reads one
// transcript: a file, or a URL naming one session (or a store of one).
func (e *env) oneTranscript(ctx context.Context, arg string) (source, func(), error) {
	srcs, close, err := e.transcripts(ctx, arg)
	if err != nil {
		return source{}, nil, err
	}
	if len(srcs) > 1 {
		close()
		names := make([]string, len(srcs))
		for i, s := range srcs {
			names[i] = s.name
		}
		return source{}, nil, fmt.Errorf("the store holds %d sessions (%s): name one with ?session=", len(srcs), strings.Join(names, ", "))
	}
	return srcs[0], close, nil
}

// readOne reads the one transcript a --transcript names (a file, or a
// session of a store) with read: Verify, or Prove, or a reading that keeps
// the bytes too; it returns the transcript's name.
func (e *env) readOne(arg string, read func(io.Reader) (*transcript.Report, error)) (name string, rep *transcript.Report, verr, err error) {
	src, close, err := e.oneTranscript(context.Background(), arg)
	if err != nil {
		return "", nil, nil, err
	}
	defer close()
	f, err := src.open()
	if err != nil {
		return "", nil, nil, err
	}
	defer f.Close()
	rep, verr = read(f)
	return src.name, rep, verr, nil
}

// readTranscript reads one transcript whole, at most limit bytes.
func (e *env) readTranscript(ctx context.Context, arg string, limit int64) ([]byte, error) {
	if err := demo.CheckPath(arg); err != nil {
		return nil, err
	}
	if !demo.IsURL(arg) {
		return e.readLimited(arg, limit)
	}
	src, close, err := e.oneTranscript(ctx, arg)
	if err != nil {
		return nil, err
	}
	defer close()
	r, err := src.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readAll(newLimitedReader(r, src.name, limit), 0)
}

// openJournal opens the journal a --transcript names, for recording: a
// new file, or a new session in a store (created by its first line; the
// URL's ?session= names it, else session is its name).
func openJournal(ctx context.Context, arg string, o *journal.Options) (*journal.Journal, func(), error) {
	if err := demo.CheckPath(arg); err != nil {
		return nil, nil, err
	}
	if !demo.IsURL(arg) {
		if _, err := os.Stat(arg); err == nil {
			return nil, nil, fmt.Errorf("%s exists; record into a new transcript", arg)
		}
		j, err := journal.Open(arg, o)
		return j, func() { os.Remove(arg) }, err
	}
	dsn, session, err := splitURL(arg)
	if err != nil {
		return nil, nil, err
	}
	if session != "" {
		o.Session = session
	}
	// A demo creates its tables, as it creates its event log.
	store, err := postgres.Open(ctx, dsn, &postgres.Options{Migrate: true})
	if err != nil {
		return nil, nil, err
	}
	if _, err := fs.Stat(store, o.Session); err == nil {
		store.Close()
		return nil, nil, fmt.Errorf("session %s is in the store already; record into a new one (?session=NAME)", o.Session)
	}
	return journal.NewSink(&closingSink{store.Sink(o.Session), store}, o), func() {}, nil
}

// closingSink closes its store with the sink: the journal's Close ends
// the command's use of the store.
type closingSink struct {
	journal.Sink
	store *postgres.Store
}

func (s *closingSink) Close() error {
	err := s.Sink.Close()
	if cerr := s.store.Close(); err == nil {
		err = cerr
	}
	return err
}

// readKey reads a key file: a signer's (NAME.key) or a verifier's
// (NAME.pub), in note's text formats.
func (e *env) readKey(path string) (string, error) {
	b, err := e.readLimited(path, 4096)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// witnessURLs adds the repeatable --witness URL flag of the commands that
// write signed transcripts.
func witnessURLs(fs *flag.FlagSet) *[]string {
	var urls []string
	fs.Func("witness", "with --sign: ask the tlog-witness at URL (promptloom witness) to cosign each checkpoint (repeatable)", func(v string) error {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%q is not an http or https URL", v)
		}
		urls = append(urls, v)
		return nil
	})
	return &urls
}

func (e *env) signer(path string) (note.Signer, error) {
	k, err := e.readKey(path)
	if err != nil {
		return nil, err
	}
	s, err := note.NewSigner(k)
	if err != nil {
		return nil, fmt.Errorf("%s: not a signer key (promptloom keygen writes NAME.key): %w", path, err)
	}
	e.warnOpenKey(path)
	return s, nil
}

// warnOpenKey warns, as ssh does, when a signer key file can be read by
// anyone but its owner: whoever reads it can sign transcripts as its
// writer. keygen writes it 0600. It warns instead of refusing: the key
// has been exposed already, and a run half-recorded helps nobody.
func (e *env) warnOpenKey(path string) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return // stdin, a pipe: no permissions to speak of
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		fmt.Fprintf(e.stderr, "promptloom: warning: %s: the signer key can be read by others (mode %04o); anyone who reads it can sign as its writer: chmod 600 %s\n", textsafe.Line(path), perm, textsafe.Line(path))
	}
}

func (e *env) verifier(path string) (note.Verifier, error) {
	k, err := e.readKey(path)
	if err != nil {
		return nil, err
	}
	v, err := note.NewVerifier(k)
	if err != nil {
		return nil, fmt.Errorf("%s: not a verifier key (promptloom keygen writes NAME.pub): %w", path, err)
	}
	return v, nil
}

// runKeygen writes a new Ed25519 key pair: the signer's key to NAME.key
// (mode 0600) and the verifier's to NAME.pub, in note's text formats; the
// key's name is NAME's last element. Neither file may exist. With
// --witness the pair is a witness's cosignature/v1 key (signature type
// 0x04): a separate key, since a witness that signed notes with its
// cosigning key could be made to sign a note that reads as a cosignature.
func runKeygen(e *env, args []string) int {
	fs := newFlags("keygen")
	forWitness := fs.Bool("witness", false, "write a witness's cosignature/v1 key pair (promptloom witness --key)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "keygen", err)
	}
	if len(pos) != 1 {
		return e.fail("keygen: takes NAME, got %d argument(s)", len(pos))
	}
	generate := note.GenerateKey
	if *forWitness {
		generate = witness.GenerateKey
	}
	skey, vkey, err := generate(rand.Reader, filepath.Base(pos[0]))
	if err == nil && !*forWitness {
		_, err = note.NewSigner(skey) // GenerateKey takes names a signer refuses
	}
	if err != nil {
		return e.fail("keygen: %q cannot name a key (no space or +): %v", filepath.Base(pos[0]), err)
	}
	for _, f := range []struct {
		path, key string
		mode      os.FileMode
	}{{pos[0] + ".key", skey, 0o600}, {pos[0] + ".pub", vkey, 0o644}} {
		w, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err != nil {
			return e.fail("keygen: %v", err)
		}
		_, err = fmt.Fprintln(w, f.key)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return e.fail("keygen: %v", err)
		}
	}
	fmt.Fprintf(e.stdout, "wrote %s.key (the signer's: keep it secret) and %s.pub (the verifier's)\n", pos[0], pos[0])
	return ExitOK
}

// runTranscript moves transcripts between files and a PostgreSQL store:
// migrate creates the store's tables (the one step that needs CREATE on
// the schema), import stores a file's lines as they are as one chain
// (named by ?session=, else by the file's name), export writes a chain's
// lines to stdout, byte for byte the file they came from.
func runTranscript(e *env, args []string) int {
	fs := newFlags("transcript")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "transcript", err)
	}
	ctx := context.Background()
	switch {
	case len(pos) == 2 && pos[0] == "migrate" && demo.IsURL(pos[1]):
		dsn, _, err := splitURL(pos[1])
		if err != nil {
			return e.fail("transcript migrate: %v", err)
		}
		s, err := postgres.Open(ctx, dsn, &postgres.Options{Migrate: true})
		if err != nil {
			return e.fail("transcript migrate: %v", err)
		}
		s.Close()
		fmt.Fprintln(e.stdout, "the transcript tables are in place")
		return ExitOK
	case len(pos) == 3 && pos[0] == "import" && demo.IsURL(pos[2]):
		return e.importTranscript(ctx, pos[1], pos[2])
	case len(pos) == 2 && pos[0] == "export" && demo.IsURL(pos[1]):
		src, close, err := e.oneTranscript(ctx, pos[1])
		if err != nil {
			return e.fail("transcript export: %v", err)
		}
		defer close()
		r, err := src.open()
		if err == nil {
			_, err = io.Copy(e.stdout, r)
			r.Close()
		}
		if err != nil {
			return e.fail("transcript export: %v", err)
		}
		return ExitOK
	}
	return e.fail("transcript: usage: promptloom %s", commands["transcript"].usage)
}

// importTranscript stores a file's lines as one new chain, in one
// transaction: all of them or none.
func (e *env) importTranscript(ctx context.Context, file, arg string) int {
	data, err := e.readTranscript(ctx, file, maxTranscriptBytes)
	if err != nil {
		return e.fail("transcript import: %v", err)
	}
	if len(data) == 0 {
		return e.fail("transcript import: %s is empty: it holds no lines to import", file)
	}
	if data[len(data)-1] != '\n' {
		return e.fail("transcript import: %s does not end in a newline (a torn last line: journal.Open repairs it)", file)
	}
	dsn, session, err := splitURL(arg)
	if err != nil {
		return e.fail("transcript import: %v", err)
	}
	if session == "" {
		session = filepath.Base(file)
	}
	store, err := openStore(ctx, dsn, arg)
	if err != nil {
		return e.fail("transcript import: %v", err)
	}
	defer store.Close()
	err = store.Sink(session).Append(ctx, func(t journal.Tail) ([]byte, error) {
		if t.Seq != 0 {
			return nil, fmt.Errorf("session %s has %d lines already", session, t.Seq)
		}
		return data, nil
	})
	if err != nil {
		return e.fail("transcript import: %v", err)
	}
	fmt.Fprintf(e.stdout, "imported %d lines of %s as session %s\n", strings.Count(string(data), "\n"), file, session)
	return ExitOK
}

// shown is a file name or URL as the command prints it: a URL without its
// password.
func shown(arg string) string {
	if !demo.IsURL(arg) {
		return arg
	}
	return dsn.Redacted(arg)
}
