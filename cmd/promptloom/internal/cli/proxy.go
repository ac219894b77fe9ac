package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/demo"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/journal/postgres"
	"github.com/promptloom/promptloom/proxy"
)

func init() {
	register("proxy", "proxy --upstream URL [--listen ADDR] [--transcript PATH_OR_URL] [--sign NAME.key [--checkpoint-every N] [--witness URL ...]] [--options FILE|DIR] [--max-bytes N] [--ui-token TOKEN] [--grace D] [--idle D] [--diagnostics] [--cache auto] [--sync-outcomes]", runProxy)
}

// runProxy serves the proxy until SIGTERM or SIGINT: it stops accepting,
// lets the calls in flight finish (up to --grace), closes every session's
// journal (checkpointed under --sign) and exits 0.
func runProxy(e *env, args []string) int {
	fs := newFlags("proxy")
	upstream := fs.String("upstream", "", "the provider's origin (https://api.anthropic.com, https://api.openai.com, https://generativelanguage.googleapis.com); a request's path is appended, once")
	listen := fs.String("listen", "127.0.0.1:0", "the address to listen on (the default: loopback, a free port)")
	tr := fs.String("transcript", "promptloom-proxy.jsonl", "where calls are recorded: a file (appended to, one session per conversation), or postgres://… (one chain per session)")
	sign := fs.String("sign", "", "sign each session with checkpoints, with this signer key (promptloom keygen writes NAME.key)")
	every := fs.Int("checkpoint-every", 0, "with --sign: also checkpoint each session every N calls (0: when it closes)")
	witnesses := witnessURLs(fs)
	optionsPath := fs.String("options", "", "hold each call's system channel and tools to a prompt: an options file, or a directory of ROLE.json named by the Promptloom-Call header's role (the part before any /)")
	maxBytes := fs.Int("max-bytes", 0, "refuse a request body over N bytes with the provider's error (0: 64 MiB)")
	token := fs.String("ui-token", "", "serve /promptloom/ to other addresses than loopback, to requests with Authorization: Bearer TOKEN or ?token=TOKEN")
	grace := fs.Duration("grace", 30*time.Second, "on SIGTERM, how long calls in flight may take to finish")
	idle := fs.Duration("idle", 0, "close a session no call has used for D (checkpointed under --sign); a later call that continues it opens a new session ID~N that names it (0: sessions close when the proxy stops)")
	diagnostics := fs.Bool("diagnostics", false, "ask the provider for its cache diagnostics on every call of a session (Anthropic, OpenAI Responses), against the session's latest response: a change to the body sent, recorded")
	autoCache := fs.String("cache", "", "auto places cache breakpoints by the provider's rules in a request that sets none (a change to the body sent, recorded)")
	syncOutcomes := fs.Bool("sync-outcomes", false, "hand on the end of each answer only once its outcome line is on disk; without it the end goes once the line is written, its fsync left to the next call's (or 10 ms later), and a machine that loses power meanwhile may lose that outcome: verify then shows the call incomplete (docs/transcript.md, \"What a crash keeps\")")
	pos, err := parseInterleaved(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("takes no file, got %q", pos[0])
	}
	if err == nil && *idle < 0 {
		err = fmt.Errorf("--idle must not be negative, got %s", *idle)
	}
	if err == nil && *autoCache != "" {
		err = oneOf("cache", *autoCache, "auto")
	}
	var up *url.URL
	if err == nil {
		if up, err = url.Parse(*upstream); err == nil && (up.Scheme != "http" && up.Scheme != "https" || up.Host == "") {
			err = fmt.Errorf("--upstream must be an http or https URL, got %q", *upstream)
		}
	}
	if err != nil {
		return e.flagError(fs, "proxy", err)
	}
	o := &journal.Options{MaxLineBytes: maxLineBytes, CheckpointEvery: *every, Witnesses: *witnesses, DeferOutcomeSync: !*syncOutcomes}
	if *sign != "" {
		if o.Signer, err = e.signer(*sign); err != nil {
			return e.fail("proxy: --sign: %v", err)
		}
	} else if len(o.Witnesses) > 0 || *every != 0 {
		return e.fail("proxy: --witness and --checkpoint-every go with --sign")
	}
	open, closeStore, err := sessionOpener(context.Background(), *tr, o)
	if err != nil {
		return e.fail("proxy: --transcript: %v", err)
	}
	defer closeStore()
	var prompt func(string) (*explain.Explanation, error)
	if *optionsPath != "" {
		if prompt, err = e.prompts(*optionsPath); err != nil {
			return e.fail("proxy: --options: %v", err)
		}
	}
	tp, flush, err := otlpTracing(context.Background())
	if err != nil {
		return e.fail("proxy: %v", err)
	}
	defer e.flushSpans(flush) // after the transcript is closed, where the last calls' spans end
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return e.fail("proxy: --listen: %v", err)
	}
	p, err := proxy.New(&proxy.Options{Upstream: up, Open: func(s string) (*journal.Journal, error) { return open(s, "") }, Follow: open, Idle: *idle, Prompt: prompt, MaxBodyBytes: *maxBytes, UIToken: *token, TracerProvider: tp,
		Diagnostics: *diagnostics, AutoCache: *autoCache == "auto",
		Verify: newPageVerifier(*tr, o.Signer).state})
	if err != nil {
		ln.Close()
		return e.fail("proxy: %v", err)
	}
	// A client has 30 s to send its headers, and a kept-alive connection
	// is closed after two idle minutes; a body's own deadlines are the
	// proxy's (it reads the body; the answer may stream for as long as
	// the model writes, which a server-wide ReadTimeout would cut).
	srv := &http.Server{Handler: traceContext(p, tp), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 1 << 20}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(e.stdout, "listening on http://%s\n", ln.Addr())
	if f, ok := e.stdout.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			p.Close()
			return e.fail("proxy: %v", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	serr := srv.Shutdown(sctx)
	if errors.Is(serr, context.DeadlineExceeded) {
		fmt.Fprintf(e.stderr, "promptloom: proxy: calls still in flight after %s: closing them\n", *grace)
		srv.Close()
	}
	if err := p.Close(); err != nil {
		// Not bad input: a journal that could not take its last lines.
		fmt.Fprintf(e.stderr, "promptloom: proxy: closing the transcript: %v\n", err)
		return ExitFail
	}
	fmt.Fprintln(e.stderr, "promptloom: proxy: stopped; the transcript is closed")
	return ExitOK
}

// sessionOpener returns how the proxy opens one session's journal: a new
// session appended to the transcript file, or a chain of the PostgreSQL
// store; follows names the session it continues ("": none).
func sessionOpener(ctx context.Context, arg string, o *journal.Options) (func(session, follows string) (*journal.Journal, error), func(), error) {
	if err := demo.CheckPath(arg); err != nil {
		return nil, nil, err
	}
	if !demo.IsURL(arg) {
		return func(session, follows string) (*journal.Journal, error) {
			so := *o
			so.Session, so.Follows = session, follows
			return journal.Open(arg, &so)
		}, func() {}, nil
	}
	dsn, prefix, err := splitURL(arg)
	if err != nil {
		return nil, nil, err
	}
	store, err := postgres.Open(ctx, dsn, &postgres.Options{Migrate: true})
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	return func(session, follows string) (*journal.Journal, error) {
		mu.Lock()
		defer mu.Unlock()
		if prefix != "" {
			session = prefix + "." + session
			if follows != "" {
				follows = prefix + "." + follows
			}
		}
		// A chain has one writer: a session name the store holds already
		// (a proxy restarted with the same Promptloom-Session) is opened
		// as NAME~N, N the least free, as a file opens it, rather than
		// refused and its run lost.
		for n, base := 1, session; ; n++ {
			f, err := store.Open(session)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return nil, err
			}
			f.Close()
			session = base + "~" + strconv.Itoa(n)
		}
		so := *o
		so.Session, so.Follows = session, follows
		return journal.NewSink(store.Sink(session), &so), nil
	}, func() { store.Close() }, nil
}

// prompts reads --options: one options file for every call, or a
// directory of ROLE.json files, a call's role being its name up to the
// first "/" (turn names after it: "planner/turn-2"). A call whose role has
// no file is refused: the proxy was asked to hold calls to prompts.
func (e *env) prompts(path string) (func(string) (*explain.Explanation, error), error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	pl := pipeline{maxBytes: 64 << 20}
	if !st.IsDir() {
		x, err := e.explainFile(path, pl)
		if err != nil {
			return nil, named(path, err)
		}
		return func(string) (*explain.Explanation, error) { return x, nil }, nil
	}
	byRole := map[string]*explain.Explanation{}
	files, _ := filepath.Glob(filepath.Join(path, "*.json"))
	for _, f := range files {
		x, err := e.explainFile(f, pl)
		if err != nil {
			return nil, named(f, err)
		}
		byRole[strings.TrimSuffix(filepath.Base(f), ".json")] = x
	}
	if len(byRole) == 0 {
		return nil, fmt.Errorf("%s has no ROLE.json options file", path)
	}
	return func(call string) (*explain.Explanation, error) {
		role, _, _ := strings.Cut(call, "/")
		if x := byRole[role]; x != nil {
			return x, nil
		}
		return nil, fmt.Errorf("no options file for call role %q in --options (the Promptloom-Call header names the role, as ROLE/TURN)", role)
	}, nil
}
