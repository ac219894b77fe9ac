package cli

import (
	"net"

	"github.com/promptloom/promptloom/internal/witness"
)

func init() {
	register("witness", "witness --key NAME.key --log LOG.pub [--log ...] --state DIR [--listen ADDR]", runWitness)
}

// runWitness serves a tlog-witness until SIGINT or SIGTERM. The state is
// read and checked before it listens, so a corrupted state directory stops
// it with exit 2 instead of a witness that forgot what it cosigned. The
// first stdout line, once connections are accepted, names the URL: with
// the default --listen the port is free, picked by the system, and a
// caller learns it there.
func runWitness(e *env, args []string) int {
	fs := newFlags("witness")
	key := fs.String("key", "", "the witness's signer key (promptloom keygen --witness NAME writes NAME.key)")
	state := fs.String("state", "", "the directory of the last checkpoint cosigned per log (created if missing)")
	listen := fs.String("listen", "127.0.0.1:0", "the address to serve add-checkpoint on")
	var logs []string
	fs.Func("log", "LOG.pub: a log's note verifier key; it covers the origin that is its name and every origin under it, NAME/... (repeatable)", func(v string) error {
		logs = append(logs, v)
		return nil
	})
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "witness", err)
	}
	switch {
	case len(pos) != 0:
		return e.fail("witness: takes no arguments, got %q", pos[0])
	case *key == "" || *state == "" || len(logs) == 0:
		return e.fail("witness: --key, --state and at least one --log are required (usage: promptloom %s)", commands["witness"].usage)
	}
	skey, err := e.readKey(*key)
	if err != nil {
		return e.fail("witness: %v", err)
	}
	vkeys := make([]string, len(logs))
	for i, l := range logs {
		if vkeys[i], err = e.readKey(l); err != nil {
			return e.fail("witness: %v", err)
		}
	}
	w, err := witness.New(skey, vkeys, *state)
	if err != nil {
		return e.fail("witness: %v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return e.fail("witness: %v", err)
	}
	if err := e.serveUntilStopped(ln, w); err != nil {
		return e.fail("witness: %v", err)
	}
	return ExitOK
}
