package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/demo"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/textsafe"
	"github.com/promptloom/promptloom/internal/witness"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transcript/report"

	"golang.org/x/mod/sumdb/note"
)

func init() {
	register("verify", "verify MANIFEST SYSTEM_FILE | verify MANIFEST --payload REQUEST.json [--provider P] | verify --transcript FILE|- [--closed] [--key VERIFIER [--witness W.pub ... [--quorum N]]] [--format text|json] | verify --proof FILE --key VERIFIER | verify --consistency FILE --key VERIFIER", runVerify)
}

// runVerify checks a manifest against the exact bytes of a served prompt,
// or a whole transcript (promptloom's, chain and all, or Harn's receipts):
// exit 0 when everything holds and at least one call verified, 1 naming the
// line and what does not (an empty or unreadable transcript included).
func runVerify(e *env, args []string) int {
	fs := newFlags("verify")
	trArg := fs.String("transcript", "", "verify every call of a JSONL transcript (- for standard input), or every chain of a postgres:// URL (?session=NAME: one)")
	key := fs.String("key", "", "with --transcript or --proof: fail unless each session ends in a checkpoint signed by this verifier key (NAME.pub)")
	proof := fs.String("proof", "", "verify a proof of one call (promptloom prove) against --key, without its transcript")
	consistency := fs.String("consistency", "", "verify a consistency proof (promptloom prove --from) against --key, without its transcript")
	var witnesses []string
	fs.Func("witness", "with --transcript and --key: a witness's verifier key (W.pub); each session's last checkpoint must be cosigned by --quorum of them (repeatable)", func(v string) error {
		witnesses = append(witnesses, v)
		return nil
	})
	quorum := fs.Int("quorum", 0, "with --witness: how many of the witnesses must have cosigned (default all)")
	format := fs.String("format", "text", "with --transcript: text or json")
	closed := fs.Bool("closed", false, "with --transcript: fail unless the run is finished, every session closed and every line whole (without it, a run still being written verifies as far as it is written, and is said to be open)")
	pf := addPayloadFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "verify", err)
	}
	if err := oneOf("format", *format, "text", "json"); err != nil {
		return e.fail("verify: %v", err)
	}
	if *format == "json" && *trArg == "" {
		return e.fail("verify: --format json goes with --transcript")
	}
	o := &transcript.Options{MaxLineBytes: maxLineBytes}
	if *key != "" {
		if o.Verifier, err = e.verifier(*key); err != nil {
			return e.fail("verify: %v", err)
		}
	}
	for _, w := range witnesses {
		k, err := e.readKey(w)
		if err == nil {
			var v note.Verifier
			if v, err = witness.NewVerifier(k); err == nil {
				o.Cosigners = append(o.Cosigners, v)
			}
		}
		if err != nil {
			return e.fail("verify: --witness %s: %v", w, err)
		}
	}
	o.Quorum = *quorum
	switch {
	case (len(witnesses) > 0 || *quorum != 0) && (*trArg == "" || *key == ""):
		return e.fail("verify: --witness and --quorum go with --transcript and --key")
	case *quorum < 0 || *quorum > len(witnesses):
		return e.fail("verify: --quorum %d: at most the %d witness key(s) given", *quorum, len(witnesses))
	case *consistency != "" && (*trArg != "" || *proof != "" || len(pos) > 0):
		return e.fail("verify --consistency: takes --key and nothing else")
	case *consistency != "" && *key == "":
		return e.fail("verify --consistency: give the signer's verifier key with --key: a proof without it proves nothing")
	case *consistency != "":
		return e.verifyConsistency(*consistency, o.Verifier)
	case *proof != "" && (*trArg != "" || len(pos) > 0):
		return e.fail("verify --proof: takes --key and nothing else")
	case *proof != "" && *key == "":
		return e.fail("verify --proof: give the signer's verifier key with --key: a proof without it proves nothing")
	case *proof != "":
		// A proof is read as a proof (CheckProof), never as a transcript.
		return e.verifyTranscript(*proof, func(r io.Reader) (*transcript.Report, error) { return transcript.CheckProof(r, o.Verifier, o) }, "text", true)
	case *closed && *trArg == "":
		return e.fail("verify: --closed goes with --transcript")
	case *trArg != "" && len(pos) > 0:
		return e.fail("verify --transcript: takes no other argument, got %q", pos[0])
	case *trArg != "":
		return e.verifyTranscript(*trArg, func(r io.Reader) (*transcript.Report, error) { return transcript.Verify(r, o) }, *format, *closed)
	case *key != "":
		return e.fail("verify: --key goes with --transcript or --proof")
	}
	if *pf.payload != "" {
		return e.verifyPayload(pos, pf)
	}
	if len(pos) != 2 {
		return e.fail("verify: takes MANIFEST and SYSTEM_FILE, got %d argument(s)", len(pos))
	}
	m, err := e.readManifest(pos[0])
	if err != nil {
		return e.fail("verify: %v", err)
	}
	system, err := e.readLimited(pos[1], maxPromptBytes)
	if err != nil {
		return e.fail("verify: %v", err)
	}
	if err := manifest.Validate(m, string(system)); err != nil {
		return e.failRule(inFile(err, m, pos[1], string(system)))
	}
	hash, err := m.ContentHash()
	if err != nil {
		return e.fail("verify: %s: %v", pos[0], err)
	}
	fmt.Fprintf(e.stdout, "ok: manifest content hash %s holds for %d bytes (%d segments, %d included)\n",
		hash, len(system), len(m.Segments), m.IncludedCount())
	return ExitOK
}

// verifyConsistency checks a consistency proof: exit 0 saying the two
// trees, 1 saying why not.
func (e *env) verifyConsistency(path string, key note.Verifier) int {
	proof, err := e.readLimited(path, 1<<20)
	if err != nil {
		return e.fail("verify: %v", err)
	}
	from, to, err := transcript.CheckConsistency(proof, key)
	if err != nil {
		fmt.Fprintf(e.stdout, "FAIL %s\n", textsafe.Line(err.Error()))
		return ExitFail
	}
	fmt.Fprintf(e.stdout, "ok: signed by %s, the tree of %d call(s) (root %s) extends the tree of %d (root %s) the earlier checkpoint signs\n", key.Name(), to.N, to.Hash, from.N, from.Hash)
	return ExitOK
}

// verifyTranscript verifies a file, or each session of a store (said
// session by session, then which failed and which are open), with read:
// Verify, or CheckProof. A run still being written verifies as far as it
// is written (transcript.Report.Holds), and is said to be open; closed asks
// for a finished run (transcript.Report.OK).
func (e *env) verifyTranscript(arg string, read func(io.Reader) (*transcript.Report, error), format string, closed bool) int {
	srcs, close, err := e.transcripts(context.Background(), arg)
	if err != nil {
		return e.fail("verify: %v", err)
	}
	defer close()
	var failed, open []string
	var verdicts []transcriptVerdict
	for _, src := range srcs {
		if demo.IsURL(arg) && format == "text" {
			fmt.Fprintf(e.stdout, "chain %s:\n", textsafe.Line(src.name))
		}
		f, err := src.open()
		if err != nil {
			return e.fail("verify: %v", err)
		}
		rep, err := read(f)
		f.Close()
		if format == "json" {
			v := newVerdict(src.name, rep, err)
			if closed && !v.Finished {
				v.OK = false
			}
			verdicts = append(verdicts, v)
			if !v.OK {
				failed = append(failed, src.name)
			}
			continue
		}
		if werr := rep.WriteText(e.stdout); werr != nil {
			return e.fail("verify: %v", werr)
		}
		code := verdict(e.stdout, rep, err)
		if code == ExitOK && closed && !rep.OK() {
			fmt.Fprintf(e.stdout, "FAIL --closed: the run is not finished: %s\n", rep.Unfinished())
			code = ExitFail
		}
		switch {
		case code != ExitOK:
			failed = append(failed, textsafe.Line(src.name))
		case !rep.OK():
			open = append(open, textsafe.Line(src.name))
		}
	}
	if format == "json" {
		if err := writeJSON(e, map[string]any{"transcripts": verdicts, "ok": len(failed) == 0}); err != nil {
			return e.fail("verify: %v", err)
		}
	} else if demo.IsURL(arg) {
		fmt.Fprintf(e.stdout, "%d of %d chain(s) verified", len(srcs)-len(failed), len(srcs))
		if len(open) > 0 {
			fmt.Fprintf(e.stdout, ", %d of them open (still being written): %s", len(open), strings.Join(open, ", "))
		}
		if len(failed) > 0 {
			fmt.Fprintf(e.stdout, "; failed: %s", strings.Join(failed, ", "))
		}
		fmt.Fprintln(e.stdout)
	}
	if len(failed) > 0 {
		return ExitFail
	}
	return ExitOK
}

// transcriptVerdict is one transcript's verification as --format json
// writes it: its name (a file, or a store's chain), whether it verified,
// the error that cut the reading short (a line past the cap, a failed
// read), and the report.
type transcriptVerdict struct {
	Name string `json:"name"`
	// OK: it verifies as far as it is written (transcript.Report.Holds);
	// Finished: and every session is closed, every line whole
	// (transcript.Report.OK), what verify --closed asks for.
	OK       bool `json:"ok"`
	Finished bool `json:"finished"`
	// State is the verdict in one line, as the proxy's page says it.
	State  string      `json:"state"`
	Error  string      `json:"error,omitempty"`
	Report *reportJSON `json:"report"`
}

// reportJSON is a transcript.Report as --format json writes it, field for
// field, each call with what changed since its role's last call
// (report.Compare) after the verifier's own fields, as the report carried
// them before package transcript/report computed them.
// TestReportJSONIsTheReports holds it to transcript.Report's fields.
type reportJSON struct {
	Format        string                   `json:"format"`
	Calls         []callJSON               `json:"calls"`
	Problems      []*manifest.RuleError    `json:"problems,omitempty"`
	Lines         int                      `json:"lines"`
	Head          string                   `json:"head,omitempty"`
	Checkpoints   int                      `json:"checkpoints,omitempty"`
	SignedBy      string                   `json:"signed_by,omitempty"`
	SignedThrough int                      `json:"signed_through,omitempty"`
	CosignedBy    []string                 `json:"cosigned_by,omitempty"`
	Unattributed  int                      `json:"unattributed,omitempty"`
	Changed       int                      `json:"changed,omitempty"`
	Open          []transcript.OpenSession `json:"open,omitempty"`
	Refused       []transcript.Refusal     `json:"refused,omitempty"`
}

type callJSON struct {
	transcript.CallReport
	Previous          string       `json:"previous,omitempty"`
	Changes           []changeJSON `json:"changes,omitempty"`
	CommonPrefixBytes int          `json:"common_prefix_bytes,omitempty"`
	ResendBytes       int          `json:"resend_bytes,omitempty"`
}

// changeJSON is a manifest.Change as the report's JSON has always
// written one.
type changeJSON struct{ ID, What string }

func newVerdict(name string, rep *transcript.Report, err error) transcriptVerdict {
	v := transcriptVerdict{Name: name, OK: err == nil && rep.Holds(), Finished: err == nil && rep.OK(), State: liveState(rep, err), Report: newReportJSON(rep)}
	if err != nil {
		v.Error = err.Error()
	}
	return v
}

func newReportJSON(rep *transcript.Report) *reportJSON {
	if rep == nil {
		return nil
	}
	out := &reportJSON{Format: rep.Format, Calls: make([]callJSON, len(rep.Calls)), Problems: rep.Problems, Lines: rep.Lines, Head: rep.Head,
		Checkpoints: rep.Checkpoints, SignedBy: rep.SignedBy, SignedThrough: rep.SignedThrough, CosignedBy: rep.CosignedBy, Unattributed: rep.Unattributed, Changed: rep.Changed,
		Open: rep.Open, Refused: rep.Refused}
	since := report.Compare(rep)
	for i, c := range rep.Calls {
		out.Calls[i].CallReport = c
		if s := since[i]; s != nil {
			out.Calls[i].Previous, out.Calls[i].CommonPrefixBytes, out.Calls[i].ResendBytes = s.Previous, s.CommonPrefixBytes, s.ResendBytes
			for _, ch := range s.Changes {
				out.Calls[i].Changes = append(out.Calls[i].Changes, changeJSON{ch.ID, ch.What})
			}
		}
	}
	return out
}

// verdict is the exit code of a verified transcript: 1 when it does not
// hold as far as it is written (transcript.Report.Holds: a run still being
// written, its sessions open, holds), or when err (a line past the cap, a
// read that failed) cut the reading short; err is then a FAIL line on w:
// what was read is reported, and the transcript is not proven.
func verdict(w io.Writer, rep *transcript.Report, err error) int {
	if err != nil {
		fmt.Fprintf(w, "FAIL %s\n", textsafe.Line(err.Error()))
		return ExitFail
	}
	if !rep.Holds() {
		return ExitFail
	}
	return ExitOK
}

// noteOpen tells stderr that the transcript arg names is still being
// written, when it is (openNote).
func (e *env) noteOpen(arg string, rep *transcript.Report) {
	if note := rep.Unfinished(); note != "" {
		fmt.Fprintf(e.stderr, "promptloom: %s: %s\n", textsafe.Line(shown(arg)), note)
	}
}

// liveState is a transcript's verdict in one line, as the proxy's page
// shows it: the same verdict verify gives (transcript.Report.Holds), so the
// page and the CLI never disagree about what verifies.
func liveState(rep *transcript.Report, err error) string {
	if err != nil {
		return "FAIL: " + textsafe.Line(err.Error())
	}
	ok, inc, failed := rep.Counts()
	state := fmt.Sprintf("%d call(s) verified, %d incomplete, %d failed", ok, inc, failed)
	if rep.Holds() && !rep.OK() {
		// A run that holds has no call unanswered but those in flight.
		state = fmt.Sprintf("%d call(s) verified, %d in flight", ok, inc)
	}
	if n := len(rep.Refused); n > 0 {
		state += fmt.Sprintf(", %d refused", n)
	}
	switch {
	case rep.OK():
		return state + "; every session closed"
	case rep.Holds():
		return state + "; " + rep.Unfinished()
	}
	for _, p := range rep.Problems {
		if !rep.Pending(p) {
			return "FAIL: " + state + "; " + textsafe.Line(p.Detail)
		}
	}
	return "FAIL: " + state
}

// failRule prints a manifest that does not hold as verify's FAIL line,
// named by the rule it breaks and escaped (textsafe), and exits 1. Harn
// reports a changed byte as the whole digest first; a second line then
// says where the prompt differs.
// inFile words a broken rule about a system prompt read from a file as
// about that file: the library words them as Harn does, of the "provider
// request", which a text file is not.
func inFile(err error, m *manifest.Manifest, name, system string) error {
	var re *manifest.RuleError
	if !errors.As(err, &re) {
		return err
	}
	c := *re
	switch re.Rule {
	case "system_prompt_bytes":
		c.Detail = fmt.Sprintf("manifest system_prompt_bytes=%d but %s has %d bytes", m.SystemPromptBytes, name, len(system))
	case "whole_prompt_digest":
		c.Detail = fmt.Sprintf("manifest whole_prompt_digest %s does not match %s, whose digest is %s", m.WholePromptDigest, name, digest.Of(system))
	default:
		return err
	}
	return &c
}

func (e *env) failRule(err error) int {
	var re *manifest.RuleError
	name := manifest.Rule("unknown")
	if errors.As(err, &re) {
		name = re.Rule
	}
	fmt.Fprintf(e.stdout, "FAIL %s: %s\n", name, textsafe.Line(err.Error()))
	if re != nil && re.Located != nil {
		fmt.Fprintf(e.stdout, "FAIL %s: %s\n", re.Located.Rule, textsafe.Line(re.Located.Error()))
	}
	return ExitFail
}
