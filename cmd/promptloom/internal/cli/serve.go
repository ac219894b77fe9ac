package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/promptloom/promptloom/journal/tiles"
	"github.com/promptloom/promptloom/transcript"
)

func init() {
	register("serve", "serve --transcript FILE [--key VERIFIER] [--listen ADDR]", runServe)
}

// tilesPrefix is where serve, as the proxy does, serves each session's
// tree: /promptloom/tiles/SESSION/checkpoint and .../tile/...
const tilesPrefix = "/promptloom/tiles/"

// staticLogs is a recorded run's logs as a tiles.Source.
type staticLogs map[string]tiles.Log

func (s staticLogs) Log(name string) (tiles.Log, bool) { l, ok := s[name]; return l, ok }

// runServe serves a recorded run's signed sessions as C2SP tlog-tiles,
// read-only, until SIGINT or SIGTERM: the transcript is verified once, at
// start (with --key, against that key), and what it holds then is served.
// The first stdout line, once connections are accepted, names the URL.
func runServe(e *env, args []string) int {
	fs := newFlags("serve")
	trArg := fs.String("transcript", "", "the signed transcript: a file, or a postgres:// URL of one session (?session=NAME)")
	key := fs.String("key", "", "verify the transcript's checkpoints against this verifier key (NAME.pub) first")
	listen := fs.String("listen", "127.0.0.1:0", "the address to listen on (the default: loopback, a free port)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "serve", err)
	}
	if *trArg == "" || len(pos) > 0 {
		return e.fail("serve: takes --transcript FILE (usage: promptloom %s)", commands["serve"].usage)
	}
	o := &transcript.Options{MaxLineBytes: maxLineBytes}
	if *key != "" {
		if o.Verifier, err = e.verifier(*key); err != nil {
			return e.fail("serve: --key: %v", err)
		}
	}
	var logs map[string]tiles.Log
	_, rep, verr, err := e.readOne(*trArg, func(r io.Reader) (rep *transcript.Report, err error) {
		logs, rep, err = transcript.Logs(r, o)
		return rep, err
	})
	if err != nil {
		return e.fail("serve: --transcript: %v", err)
	}
	if verr != nil || logs == nil {
		rep.WriteText(e.stderr)
		return verdict(e.stderr, rep, verr)
	}
	if len(logs) == 0 {
		return e.fail("serve: %s has no signed checkpoint to serve (record it with --sign)", *trArg)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return e.fail("serve: --listen: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle(tilesPrefix, http.StripPrefix(tilesPrefix, tiles.Handler(staticLogs(logs))))
	if err := e.serveUntilStopped(ln, mux); err != nil {
		return e.fail("serve: --listen: %v", err)
	}
	return ExitOK
}

// serveUntilStopped serves h on ln until SIGINT or SIGTERM, then shuts the
// server down (ten seconds for requests in flight). The first stdout line,
// once connections are accepted, names the URL: with a --listen port of 0
// the system picks a free one, and a caller learns it there.
func (e *env) serveUntilStopped(ln net.Listener, h http.Handler) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(e.stdout, "listening on http://%s\n", ln.Addr())
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = srv.Shutdown(shutdown)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
