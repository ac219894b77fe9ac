package errdoc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/assemble"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/postgres"
	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/harn/reminder"
	"github.com/promptloom/promptloom/harn/template"
	"github.com/promptloom/promptloom/journal"
	jpostgres "github.com/promptloom/promptloom/journal/postgres"
	"github.com/promptloom/promptloom/journal/replay"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/project"
	"github.com/promptloom/promptloom/provenance"
	"github.com/promptloom/promptloom/request"
	"github.com/promptloom/promptloom/stage"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transport"
	"github.com/promptloom/promptloom/witness"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"
)

// A libCase is one misuse of the library and the error it meets.
type libCase struct {
	// pkg is the package whose section holds the case, as imported below
	// the module ("budget", "eventlog/postgres"; "" for the root).
	pkg string
	// doc says when the error happens (the misuse raise commits) and what
	// a caller should know of it, in Markdown.
	doc string
	// is is the sentinel the error must match with errors.Is, and as a
	// pointer to a variable of the error type it must match with
	// errors.As; a case sets one or both. The page names them as this
	// file spells them.
	is error
	as any
	// raise commits the misuse, in an empty working directory of its own,
	// and returns the error. A case without raise is documented but not
	// raised (the test lists it as an exception, with why).
	raise func(e *env) error
	// postgres, for a case that needs a PostgreSQL server, is its message
	// as recorded against one: the page shows it, and a run with a server
	// must give it.
	postgres string

	// Filled in by libraryCases and Generate: the names of is and as, the
	// case's line in this file, and the message raised.
	isName, asName string
	line           int
	message        string
}

// library is the catalogue of the library's errors, by package, bottom
// first, in page order.
var library = []libCase{
	{
		pkg: "",
		doc: "`Reduce` (or `Check`) of a fragment with an empty id. The error names its place in the list and its source. Two fragments with one id are not an error: Harn builds them (a tool declared twice).",
		is:  promptloom.ErrEmptyID,
		raise: func(*env) error {
			_, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("x"), {Source: "caller", Body: "y"}}, nil)
			return err
		},
	},
	{
		pkg: "",
		doc: "A replacement root (`promptloom.Replacement`) reduced beside any other fragment.",
		is:  promptloom.ErrReplacementNotAlone,
		raise: func(*env) error {
			_, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Replacement("x"), promptloom.Primary("y")}, nil)
			return err
		},
	},
	{
		pkg: "digest",
		doc: "`digest.Parse` of text that is not `blake3:` and 64 lowercase hex digits.",
		is:  digest.ErrMalformed,
		raise: func(*env) error {
			_, err := digest.Parse("sha256:abc")
			return err
		},
	},
	{
		pkg: "budget",
		doc: "A budget whose total is negative, in the options of `promptloom.Reduce` (and `provenance.Assemble`).",
		is:  budget.ErrInvalid,
		raise: func(*env) error {
			return reduceUnder(&budget.Budget{Counter: budget.Bytes(), Total: -1})
		},
	},
	{
		pkg: "budget",
		doc: "A budget without a counter.",
		is:  budget.ErrInvalid,
		raise: func(*env) error {
			return reduceUnder(&budget.Budget{Counter: nil, Total: 100})
		},
	},
	{
		pkg: "budget",
		doc: "A register listed twice in the shed order.",
		is:  budget.ErrInvalid,
		raise: func(*env) error {
			return reduceUnder(&budget.Budget{Counter: budget.Bytes(), Total: 100, ShedOrder: []budget.Register{budget.Craft, budget.Craft}})
		},
	},
	{
		pkg: "budget",
		doc: "`binding` in the shed order: binding fragments are never shed.",
		is:  budget.ErrInvalid,
		raise: func(*env) error {
			return reduceUnder(&budget.Budget{Counter: budget.Bytes(), Total: 100, ShedOrder: []budget.Register{budget.Considered, budget.Binding}})
		},
	},
	{
		pkg: "budget",
		doc: "A prompt over its budget with every sheddable fragment shed: what is left is binding, and binding fragments are never shed. The `*budget.ExceededError` gives the count, the total and how many were shed.",
		is:  budget.ErrExceeded,
		as:  new(*budget.ExceededError),
		raise: func(*env) error {
			considered := promptloom.Primary("more")
			considered.ID, considered.Register = "extra", budget.Considered
			_, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("rules"), considered},
				&promptloom.Options{Budget: &budget.Budget{Counter: budget.Bytes(), Total: 3}})
			return err
		},
	},
	{
		pkg: "harn/options",
		doc: "`options.Parse` of options Harn refuses. The `*options.Error` names the JSON path of the offending value (`Path`); the command line's \"Options\" section above shows each such error.",
		is:  options.ErrInvalid,
		as:  new(*options.Error),
		raise: func(*env) error {
			_, err := options.Parse([]byte(`{"system": [{"text": "x"}]}`), nil)
			return err
		},
	},
	{
		pkg: "harn/options",
		doc: "Input that is not JSON every reader reads alike: invalid UTF-8, a syntax error, a key given twice, a number past float range, nesting deeper than 10,000 levels. The `*options.Error` gives the byte offset (`Offset`) where there is one.",
		is:  options.ErrMalformed,
		as:  new(*options.Error),
		raise: func(*env) error {
			_, err := options.Parse([]byte(`{"system": [1,}`), nil)
			return err
		},
	},
	{
		pkg: "harn/options",
		doc: "Input over `ParseOptions.MaxBytes` (`promptloom.DefaultMaxBytes`, 64 MiB, by default), refused before it is read.",
		is:  promptloom.ErrTooLarge,
		as:  new(*options.Error),
		raise: func(*env) error {
			_, err := options.Parse([]byte(`{"system": "0123456789"}`), &options.ParseOptions{MaxBytes: 10})
			return err
		},
	},
	{
		pkg: "harn/reminder",
		doc: "`Set.Inject` of a reminder with a blank body.",
		is:  reminder.ErrInvalid,
		raise: func(*env) error {
			var s reminder.Set
			_, err := s.Inject(reminder.Reminder{Body: " "})
			return err
		},
	},
	{
		pkg: "harn/reminder",
		doc: "An authority other than contract, corrective or advisory.",
		is:  reminder.ErrInvalid,
		raise: func(*env) error {
			var s reminder.Set
			_, err := s.Inject(reminder.Reminder{Body: "b", Authority: "royal"})
			return err
		},
	},
	{
		pkg: "harn/reminder",
		doc: "A negative `TTLTurns` (`ttl_turns`).",
		is:  reminder.ErrInvalid,
		raise: func(*env) error {
			var s reminder.Set
			_, err := s.Inject(reminder.Reminder{Body: "b", TTLTurns: -1})
			return err
		},
	},
	{
		pkg: "harn/template",
		doc: "`template.Parse` of a template that does not parse. The `*template.Error` carries Harn's text and position (`Path`, `Line`, `Col`), and its `Kind` says what stopped the template: `syntax`, `render` (an unknown filter, a bad argument, a loop over a string), `include` (one that leaves the includer's directory, is missing, closes a cycle or nests past 32 levels), `bindings` (not one JSON object) or `too_large` (past `Options.MaxBytes`, and then it matches `promptloom.ErrTooLarge` too).",
		as:  new(*template.Error),
		raise: func(*env) error {
			_, err := template.Parse("main.prompt", []byte("Hello {{ if x }}"), nil)
			return err
		},
	},
	{
		pkg: "harn/template",
		doc: "`Template.Render` with bindings that are not one JSON object.",
		as:  new(*template.Error),
		raise: func(e *env) error {
			t, err := template.Parse("", []byte("x"), nil)
			if err != nil {
				e.Fatal(err)
			}
			_, err = t.Render([]byte("[1, 2]"))
			return err
		},
	},
	{
		pkg: "manifest",
		doc: "`manifest.Validate` of a manifest that does not hold for the bytes it is given: the first rule broken, in Harn's order, as a `*manifest.RuleError` (the rule, the segment, the byte, what was wanted and what was found). Here the prompt has bytes the manifest does not account for. `promptloom verify` prints the rule and the message; \"Verify\" above shows every rule.",
		is:  manifest.ErrInvalid,
		as:  new(*manifest.RuleError),
		raise: func(e *env) error {
			r := careful(e)
			return manifest.Validate(manifest.New(r, "agent"), "You are careful. Be brief.")
		},
	},
	{
		pkg: "manifest",
		doc: "A `manifest.Rule` is an error that a `*manifest.RuleError` matches, so `errors.Is` asks which rule was broken. Here one character of the prompt changed; `RuleError.Located` says where (the first segment that differs).",
		is:  manifest.Rule("whole_prompt_digest"),
		raise: func(e *env) error {
			r := careful(e)
			return manifest.Validate(manifest.New(r, "agent"), "You are carefuL.")
		},
	},
	{
		pkg: "manifest",
		doc: "`manifest.Read` of a manifest it cannot read: not JSON, another schema, a field needed to check the bytes missing or of the wrong type. The `*manifest.ReadError` names the field (`Field`, a JSON path); here the whole-prompt digest is missing.",
		is:  manifest.ErrUnreadable,
		as:  new(*manifest.ReadError),
		raise: func(*env) error {
			_, err := manifest.Read([]byte(`{"schema": "harn.llm.context_manifest.v1"}`))
			return err
		},
	},
	{
		pkg: "manifest",
		doc: "A manifest that gives a key twice: readers disagree on which copy counts (encoding/json, jq and JavaScript take the last, others the first), so promptloom takes neither. The `*manifest.ReadError` names the key's path (`Field`).",
		is:  manifest.ErrUnreadable,
		as:  new(*manifest.ReadError),
		raise: func(*env) error {
			_, err := manifest.Read([]byte(`{"schema": "harn.llm.context_manifest.v1", "schema": "harn.llm.context_manifest.v1"}`))
			return err
		},
	},
	{
		pkg: "payload",
		doc: "A request body that is not JSON, or whose system channel has a field of the wrong type or a key twice (`payload.Read`, `Request.System`, `Request.Verify`). The `*payload.Error` names the provider, the field in gjson's path syntax (`Path`) and the byte (`Offset`).",
		is:  payload.ErrMalformed,
		as:  new(*payload.Error),
		raise: func(*env) error {
			_, err := payload.Read([]byte(`{"system": "alpha",}`), payload.Auto)
			return err
		},
	},
	{
		pkg: "payload",
		doc: "A request body with no system channel.",
		is:  payload.ErrNoSystem,
		raise: func(*env) error {
			r, err := payload.Read([]byte(`{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`), payload.Auto)
			if err != nil {
				return err
			}
			_, err = r.System()
			return err
		},
	},
	{
		pkg: "payload",
		doc: "`Request.Verify` of a body whose system channel the manifest does not hold for: the error names the first fragment that differs and the byte where it starts in the channel's text, and wraps the manifest rule it broke (so it matches `manifest.ErrInvalid` too).",
		is:  payload.ErrMismatch,
		raise: func(*env) error {
			r, _ := promptloom.Reduce([]promptloom.Fragment{promptloom.SystemItem(0, "", "alpha", promptloom.Before), promptloom.SystemItem(1, "", "omega", promptloom.Before)}, nil)
			req, err := payload.Read([]byte(`{"system": "alpha\n\nOmega"}`), payload.Auto)
			if err != nil {
				return err
			}
			_, err = req.Verify(manifest.New(r, "agent"))
			return err
		},
	},
	{
		pkg: "payload",
		doc: "`payload.ParseProvider` of a name that is not a provider.",
		is:  payload.ErrUnknownProvider,
		raise: func(*env) error {
			_, err := payload.ParseProvider("openai")
			return err
		},
	},
	{
		pkg: "request",
		doc: "`request.FromPayload` given a context manifest (`Options.System`) that does not hold for the body's system channel: its fragments cannot be placed in the body's blocks.",
		is:  request.ErrNotAttributed,
		raise: func(e *env) error {
			m := manifest.New(careful(e), "agent")
			r, err := payload.Read([]byte(`{"model":"m","system":"Something else.","messages":[]}`), payload.Anthropic)
			if err != nil {
				return err
			}
			_, err = request.FromPayload(r, &request.Options{System: m})
			return err
		},
	},
	{
		pkg: "cache",
		doc: "`cache.ReadPrices` (and so `cache --prices FILE`) given a table that is not the built-in one's shape: not JSON, a date that is not YYYY-MM-DD, no models, a price that is not a decimal with at most six places. The table replaces the built-in one whole, so a bad one is refused rather than half read.",
		is:  cache.ErrPrices,
		raise: func(*env) error {
			_, err := cache.ReadPrices([]byte(`{"taken":"yesterday","models":[]}`))
			return err
		},
	},
	{
		pkg: "assemble",
		doc: "A conversation that cannot be assembled as given (here a tool result whose call no earlier turn made). The `*assemble.Error` names the part (`ID`) and the field.",
		is:  assemble.ErrInvalid,
		as:  new(*assemble.Error),
		raise: func(*env) error {
			c, err := assemble.Read([]byte(`{"provider":"anthropic","model":"claude-sonnet-4-5","window":10000,"output_reserve":1000,` +
				`"turns":[{"id":"task","source":"user","kind":"user","text":"Fix it."},{"id":"r1","source":"tool","kind":"tool_result","call":"nope","text":"ok"}]}`))
			if err != nil {
				return err
			}
			_, _, err = assemble.Assemble(c, nil)
			return err
		},
	},
	{
		pkg: "assemble",
		doc: "The binding parts alone (the task, the latest user turn, a tool call waiting for its result, anything marked binding) do not fit the window less the output reserve: nothing that may be cut would make room. Give a larger window, or a smaller reserve.",
		is:  assemble.ErrNoFit,
		raise: func(*env) error {
			c, err := assemble.Read([]byte(`{"provider":"anthropic","model":"claude-sonnet-4-5","window":600,"output_reserve":500,` +
				`"turns":[{"id":"task","source":"user","kind":"user","text":"` + strings.Repeat("line 0 ", 300) + `"}]}`))
			if err != nil {
				return err
			}
			_, _, err = assemble.Assemble(c, nil)
			return err
		},
	},
	{
		pkg: "stage",
		doc: "A caller's stage with a `kernel.` id (`kernel.prompt` is the kernel's own).",
		is:  stage.ErrInvalidStage,
		raise: func(*env) error {
			return run(nop("kernel.prompt"))
		},
	},
	{
		pkg: "stage",
		doc: "A caller's stage with an id already in the run: callers add stages, never replace them.",
		is:  stage.ErrInvalidStage,
		raise: func(*env) error {
			_, err := stage.Run(context.Background(), []stage.Stage{nop("core.system")}, []stage.Stage{nop("core.system")})
			return err
		},
	},
	{
		pkg: "stage",
		doc: "A stage without an id, or with neither or both of `Resolve` and `Compile`; a resolution stage without `Resolves`, a compilation stage with it.",
		is:  stage.ErrInvalidStage,
		raise: func(*env) error {
			return run(stage.Stage{ID: "mine"})
		},
	},
	{
		pkg: "stage",
		doc: "Two resolution stages that resolve one name (`Resolves`): refused before anything runs.",
		is:  stage.ErrInvalidStage,
		raise: func(*env) error {
			resolve := func(context.Context, map[string]any) (any, string, error) { return "go", "", nil }
			return run(stage.Stage{ID: "mine", Capability: "harness", Resolves: "lang", Resolve: resolve},
				stage.Stage{ID: "theirs", Capability: "harness", Resolves: "lang", Resolve: resolve})
		},
	},
	{
		pkg: "stage",
		doc: "A handler returned an error: the run stops, and the `*stage.Error` names the stage and wraps the handler's error as it is (match it with `errors.Is`).",
		as:  new(*stage.Error),
		raise: func(*env) error {
			return run(stage.Stage{ID: "mine", Capability: "harness",
				Compile: func(context.Context, map[string]any, []promptloom.Fragment) ([]promptloom.Fragment, error) {
					return nil, errors.New("disk full")
				}})
		},
	},
	{
		pkg: "stage",
		doc: "A handler panicked: the panic is caught and blamed on the stage.",
		is:  stage.ErrPanicked,
		raise: func(*env) error {
			return run(stage.Stage{ID: "mine", Capability: "harness",
				Compile: func(context.Context, map[string]any, []promptloom.Fragment) ([]promptloom.Fragment, error) {
					panic("nil map")
				}})
		},
	},
	{
		pkg: "project",
		doc: "`project.Detect` of a path that is not a directory.",
		is:  project.ErrNotADirectory,
		raise: func(e *env) error {
			if err := os.WriteFile("go.mod", nil, 0o644); err != nil {
				e.Fatal(err)
			}
			_, err := project.Detect("go.mod", func(string) bool { return false })
			return err
		},
	},
	{
		pkg: "eventlog",
		doc: "`Get` of a position the log does not have.",
		is:  eventlog.ErrNoEvent,
		raise: func(*env) error {
			_, err := eventlog.NewMemory(nil).Get(context.Background(), 7)
			return err
		},
	},
	{
		pkg: "eventlog",
		doc: "An event without a kind: the batch is refused whole. A payload that does not marshal to JSON (or, as a `json.RawMessage`, is not JSON) is refused the same way, and so is, by a PostgreSQL store, a kind, actor or audience role that PostgreSQL's `text` cannot hold (invalid UTF-8, a NUL byte), before anything is sent; memory and SQLite keep such strings.",
		is:  eventlog.ErrInvalidDraft,
		raise: func(*env) error {
			_, err := eventlog.NewMemory(nil).Append(context.Background(), eventlog.Draft{Payload: 1})
			return err
		},
	},
	{
		pkg: "eventlog",
		doc: "Any use of a closed store.",
		is:  eventlog.ErrClosed,
		raise: func(*env) error {
			m := eventlog.NewMemory(nil)
			m.Close()
			_, err := m.Append(context.Background(), eventlog.Draft{Kind: "k", Payload: 1})
			return err
		},
	},
	{
		pkg:      "eventlog/postgres",
		doc:      "A database whose `eventlog_schema` holds a version this build does not read (a newer promptloom wrote it; see `docs/postgres.md`). Nothing is changed.",
		is:       postgres.ErrSchemaVersion,
		postgres: "eventlog: open postgres://db.example/log: event log schema version is not this build's: the database has version 2, this build reads version 1",
		raise: func(e *env) error {
			url := e.Postgres()
			s, err := postgres.Open(context.Background(), url, &postgres.Options{Migrate: true})
			if err != nil {
				e.Fatal(err)
			}
			s.Close()
			execSQL(e, url, `UPDATE eventlog_schema SET version = 2`)
			_, err = postgres.Open(context.Background(), url, nil)
			// The URL names a schema made for the case: show a fixed one.
			return renamed{err, strings.ReplaceAll(fmt.Sprint(err), url, "postgres://db.example/log")}
		},
	},
	{
		pkg:      "eventlog/postgres",
		doc:      "`Open` without `Options.Migrate` of a schema that has no event log tables: creating them is its own step, the one that needs `CREATE` on the schema (`promptloom demo negotiation --db URL` and `--record URL` take it, as they create their log). Every other open needs only what reading and appending need (`docs/postgres.md`).",
		is:       fs.ErrNotExist,
		postgres: "eventlog: open postgres://db.example/log: no event log tables in this schema (create them with Options.Migrate): file does not exist",
		raise: func(e *env) error {
			url := e.Postgres()
			_, err := postgres.Open(context.Background(), url, nil)
			return renamed{err, strings.ReplaceAll(fmt.Sprint(err), url, "postgres://db.example/log")}
		},
	},
	{
		pkg: "eventlog/postgres",
		doc: "A batch that committed (the error names its positions) but whose wait for the WAL flush then failed, and which `Append` could then neither read back at its positions nor see flushed to disk, for ten seconds or as long as its appenders waited (the server is unreachable, the store was closed): readers may already see it, and it is on disk unless the server crashed before flushing it. A batch found there is a success, one found missing is written again; only this case is left to you. The error says why the wait failed and wraps `eventlog.ErrClosed` when the store was closed, but not the driver's error: the append statement was not refused. Check the log before appending the batch again. No example: it needs the server to fail between the two statements.",
		is:  postgres.ErrUnconfirmed,
	},
	{
		pkg: "journal/postgres",
		doc: "An append whose COMMIT went unanswered (a cut connection) and whose lines could not be looked for in the chain for ten seconds: they may be in it or not. The error names the chain and the lines' seqs; the sink's next append looks for them first and goes on from what the chain holds. No example: it needs the connection cut between the COMMIT and its answer with the server out of reach after.",
		is:  jpostgres.ErrUnconfirmed,
	},
	{
		pkg: "provenance",
		doc: "A grant with a field that is not a `*provenance.Slice` or `*provenance.Given` (a store, a string): reading around the grant would be possible.",
		is:  provenance.ErrInvalidGrant,
		raise: func(*env) error {
			type grant struct{ Store eventlog.Store }
			_, err := provenance.Assemble(context.Background(), "uk", func(context.Context, grant) ([]provenance.Part, error) { return nil, nil },
				grant{Store: eventlog.NewMemory(nil)}, nil)
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "Grant slices opened at different log positions.",
		is:  provenance.ErrInvalidGrant,
		raise: func(e *env) error {
			store := logOf(e, 2)
			_, err := provenance.Assemble(context.Background(), "uk", noParts, twoSlices{provenance.OpenLog(store, 2, provenance.All), provenance.NewGiven("brief", 1, "x")}, nil)
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "A grant whose slices already handed something out.",
		is:  provenance.ErrInvalidGrant,
		raise: func(e *env) error {
			store := logOf(e, 2)
			g := twoSlices{provenance.OpenLog(store, 2, provenance.All), provenance.NewGiven("brief", 2, "x")}
			g.Log.Read(context.Background())
			_, err := provenance.Assemble(context.Background(), "uk", noParts, g, nil)
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "A slice opened with a nil predicate. A nil predicate admits nothing; pass `provenance.All` to admit everything. A slice read on its own (`Slice.Read`) returns the error too.",
		is:  provenance.ErrInvalidGrant,
		raise: func(e *env) error {
			store := logOf(e, 1)
			_, err := provenance.Assemble(context.Background(), "uk", noParts,
				twoSlices{provenance.OpenLog(store, 1, nil), provenance.NewGiven("brief", 1, "x")}, nil)
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "A fold behind or ahead of the grant's position by an event it claims, found before the assembler runs or, for a beliefs slice, at any read during it.",
		is:  provenance.ErrStaleRead,
		raise: func(e *env) error {
			store := logOf(e, 1)
			store.Append(context.Background(), eventlog.Draft{Kind: provenance.KindBeliefHeld, Payload: provenance.Belief{Scope: "uk", Text: "x"}})
			beliefs := &provenance.Beliefs{} // never caught up: at 0, behind the slice at 2
			_, err := provenance.Assemble(context.Background(), "uk", func(context.Context, beliefGrant) ([]provenance.Part, error) { return nil, nil },
				beliefGrant{provenance.OpenBeliefs(store, beliefs, 2, provenance.All)}, nil)
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "A belief slice asked for a scope its predicate does not grant.",
		is:  provenance.ErrNotGranted,
		raise: func(e *env) error {
			store := logOf(e, 1)
			beliefs := &provenance.Beliefs{}
			if err := provenance.CatchUp(context.Background(), store, beliefs); err != nil {
				e.Fatal(err)
			}
			uk := func(scope string) bool { return scope == "uk" }
			_, err := provenance.OpenBeliefs(store, beliefs, 1, uk).Scope(context.Background(), "eu")
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "A part citing a source no slice handed out.",
		is:  provenance.ErrUncitedSource,
		raise: func(e *env) error {
			store := logOf(e, 2)
			_, err := provenance.Assemble(context.Background(), "uk", func(context.Context, twoSlices) ([]provenance.Part, error) {
				return []provenance.Part{{Slot: "leak", Text: "x", Cites: []provenance.Source{"event:2"}}}, nil
			}, twoSlices{provenance.OpenLog(store, 2, provenance.All), provenance.NewGiven("brief", 2, "x")}, nil)
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "A part citing chronicle prose that is not labelled `generated`.",
		is:  provenance.ErrInvalidPart,
		raise: func(e *env) error {
			_, err := provenance.Assemble(context.Background(), "uk", func(ctx context.Context, g chronicleGrant) ([]provenance.Part, error) {
				sections, err := g.Chronicle.Read(ctx)
				s := sections[0]
				return []provenance.Part{{Slot: "summary", Register: budget.Considered, Text: s.Text,
					Cites: []provenance.Source{g.Chronicle.Cite(s)}}}, err
			}, chronicleOf(e), nil)
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "Chronicle prose read through the grant but cited by no generated part.",
		is:  provenance.ErrInvalidPart,
		raise: func(e *env) error {
			_, err := provenance.Assemble(context.Background(), "uk", func(ctx context.Context, g chronicleGrant) ([]provenance.Part, error) {
				sections, err := g.Chronicle.Read(ctx)
				return []provenance.Part{{Slot: "summary", Text: sections[0].Text}}, err
			}, chronicleOf(e), nil)
			return err
		},
	},
	{
		pkg: "provenance",
		doc: "Two parts in one slot (the slot is the fragment id).",
		is:  provenance.ErrInvalidPart,
		raise: func(e *env) error {
			store := logOf(e, 1)
			_, err := provenance.Assemble(context.Background(), "uk", func(context.Context, twoSlices) ([]provenance.Part, error) {
				return []provenance.Part{{Slot: "a", Text: "x"}, {Slot: "a", Text: "y"}}, nil
			}, twoSlices{provenance.OpenLog(store, 1, provenance.All), provenance.NewGiven("brief", 1, "x")}, nil)
			return err
		},
	},
	{
		pkg: "journal",
		doc: "`Journal.Call` with a manifest that does not hold for the bytes to send: nothing is written, the model is not called.",
		is:  journal.ErrStaleManifest,
		raise: func(e *env) error {
			r := careful(e)
			_, err := journal.New(nil, nil).Call(context.Background(), nil,
				journal.Request{Call: "c1", System: "You are careless.", Manifest: manifest.New(r, "agent")})
			return err
		},
	},
	{
		pkg: "journal",
		doc: "`Journal.Call` with a request body whose system channel does not hold to the manifest: a changed character, text added that `Request.Sent` does not vouch for, a malformed body or one with no system channel. It wraps the `*payload.Error` (here `payload.ErrMismatch`, and through it `manifest.ErrInvalid`); nothing is written, the model is not called.",
		is:  journal.ErrStaleManifest,
		as:  new(*payload.Error),
		raise: func(e *env) error {
			r := careful(e)
			_, err := journal.New(nil, nil).Call(context.Background(), nil, journal.Request{Call: "c1", System: r.System,
				Manifest: manifest.New(r, "agent"), Body: []byte(`{"system":"You are careless."}`)})
			return err
		},
	},
	{
		pkg: "journal",
		doc: "`Journal.Call` with both `Request.Sent` (the adapter's own transform) and a request body whose system channel is some other text. ",
		is:  journal.ErrStaleManifest,
		raise: func(e *env) error {
			r := careful(e)
			sent := "/no_think\nYou are careful."
			_, err := journal.New(nil, nil).Call(context.Background(), nil, journal.Request{Call: "c1", System: r.System,
				Manifest: manifest.New(r, "agent"), Sent: &sent, Body: []byte(`{"system":"You are careful."}`)})
			return err
		},
	},
	{
		pkg: "journal",
		doc: "`Journal.Close` (or a periodic checkpoint) of a signing journal whose witness refused to cosign or could not be reached (`Options.Witnesses`): every call and the checkpoint are recorded, without that witness's cosignature. The message names the witness and, when it answered, its refusal and HTTP status (404 an origin it does not witness, 403 no signature by the log's key, 409 not the size it last cosigned, 422 a proof that does not verify).",
		is:  journal.ErrNotCosigned,
		raise: func(e *env) error {
			skey, _, err := note.GenerateKey(rand.Reader, "log")
			if err != nil {
				e.Fatal(err)
			}
			signer, _ := note.NewSigner(skey)
			r := careful(e)
			j := journal.New(io.Discard, &journal.Options{Session: "s1", Signer: signer, Witnesses: []string{"http://127.0.0.1:1"}})
			if _, err := j.Call(context.Background(), journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
				return journal.Response{Text: "ok"}, nil
			}), journal.Request{Call: "c1", System: r.System, Manifest: manifest.New(r, "agent")}); err != nil {
				e.Fatal(err)
			}
			return j.Close()
		},
	},
	{
		pkg: "journal",
		doc: "`Journal.Call` after `Close`: the session's journal_close is written, and no call may follow it.",
		is:  journal.ErrClosed,
		raise: func(e *env) error {
			r := careful(e)
			j := journal.New(io.Discard, nil)
			j.Close()
			_, err := j.Call(context.Background(), nil, journal.Request{Call: "c1", System: r.System, Manifest: manifest.New(r, "agent")})
			return err
		},
	},
	{
		pkg: "journal",
		doc: "`journal.Open` of a file whose last line is not a chained promptloom line (a Harn transcript, or one written before the chain): the chain cannot continue it.",
		is:  journal.ErrForeignTranscript,
		raise: func(e *env) error {
			if err := os.WriteFile("harn.jsonl", []byte(`{"type":"system_prompt","content":"x"}`+"\n"), 0o644); err != nil {
				e.Fatal(err)
			}
			_, err := journal.Open("harn.jsonl", nil)
			return err
		},
	},
	{
		pkg: "transcript",
		doc: "`transcript.Verify` (and `promptloom verify --transcript`) of a line longer than `Options.MaxLineBytes` (`promptloom.DefaultMaxBytes` by default; 64 here): it is refused without being held whole.",
		is:  promptloom.ErrTooLarge,
		raise: func(*env) error {
			_, err := transcript.Verify(strings.NewReader(strings.Repeat("x", 100)+"\n"), &transcript.Options{MaxLineBytes: 64})
			return err
		},
	},
	{
		pkg: "journal/replay",
		doc: "A strict `replay.Model` without a recorded log.",
		is:  replay.ErrNoRecording,
		raise: func(*env) error {
			_, err := replay.New(context.Background(), nil, &replay.Options{Strict: true})
			return err
		},
	},
	{
		pkg: "journal/replay",
		doc: "A strict call with no pin. The `*replay.MissError` names the call and, against the nearest pin, the fragments that changed.",
		is:  replay.ErrPinMiss,
		as:  new(*replay.MissError),
		raise: func(e *env) error {
			p, err := replay.New(context.Background(), nil, &replay.Options{Strict: true, Recorded: eventlog.NewMemory(nil)})
			if err != nil {
				e.Fatal(err)
			}
			_, err = p.Complete(context.Background(), journal.Request{Call: "c1", System: "hello"})
			return err
		},
	},
	{
		pkg:      "journal/postgres",
		doc:      "`Open` without `Options.Migrate` of a schema that has no transcript tables: creating them is its own step, the one that needs `CREATE` on the schema. A store is an `fs.FS` of its chains, so its errors match the standard library's sentinels.",
		is:       fs.ErrNotExist,
		postgres: "journal/postgres: open postgres://db.example/runs: no transcript tables in this schema (create them with Options.Migrate): file does not exist",
		raise: func(e *env) error {
			url := e.Postgres()
			_, err := jpostgres.Open(context.Background(), url, nil)
			return renamed{err, strings.ReplaceAll(fmt.Sprint(err), url, "postgres://db.example/runs")}
		},
	},
	{
		pkg:      "journal/postgres",
		doc:      "`Open` of tables whose `transcript_schema` holds a version this build does not read (a newer promptloom made them). Nothing is changed.",
		is:       errors.ErrUnsupported,
		postgres: "journal/postgres: open postgres://db.example/runs: the transcript tables have schema version 2, this build reads version 1: unsupported operation",
		raise: func(e *env) error {
			url := e.Postgres()
			s, err := jpostgres.Open(context.Background(), url, &jpostgres.Options{Migrate: true})
			if err != nil {
				e.Fatal(err)
			}
			s.Close()
			execSQL(e, url, `UPDATE transcript_schema SET version = 2`)
			_, err = jpostgres.Open(context.Background(), url, nil)
			return renamed{err, strings.ReplaceAll(fmt.Sprint(err), url, "postgres://db.example/runs")}
		},
	},
	{
		pkg:      "journal/postgres",
		doc:      "`Store.Sink` of a name no chain can have (empty, `.`, `..`, a slash, a control character): its every `Append` fails before anything is sent.",
		is:       fs.ErrInvalid,
		postgres: "append a/b: invalid argument",
		raise: func(e *env) error {
			s, err := jpostgres.Open(context.Background(), e.Postgres(), &jpostgres.Options{Migrate: true})
			if err != nil {
				e.Fatal(err)
			}
			defer s.Close()
			return s.Sink("a/b").Append(context.Background(), func(journal.Tail) ([]byte, error) { return []byte("x\n"), nil })
		},
	},
	{
		pkg:      "journal/postgres",
		doc:      "An `Append` with lines to a chain another sink wrote: at a sink's first append the chain must be empty, and at every later one its tail must be the sink's own last line. The chain is left as it was. Record under a new session name.",
		is:       jpostgres.ErrOtherWriter,
		postgres: "journal/postgres: chain run-1: the chain has another writer: it already holds 1 line(s); a chain is one sink's, so record under a new session name",
		raise: func(e *env) error {
			s, err := jpostgres.Open(context.Background(), e.Postgres(), &jpostgres.Options{Migrate: true})
			if err != nil {
				e.Fatal(err)
			}
			defer s.Close()
			line := func(journal.Tail) ([]byte, error) { return []byte("{}\n"), nil }
			if err := s.Sink("run-1").Append(context.Background(), line); err != nil {
				e.Fatal(err)
			}
			return s.Sink("run-1").Append(context.Background(), line)
		},
	},
	{
		pkg: "transport",
		doc: "`RoundTrip` of a request that does not send a tool whose guidance the prompt kept (rule `tool_not_sent`; the `*manifest.RuleError` names the fragment in `ID` and the tool in `Got`): nothing is sent or journaled. Send the tool, or build the prompt with the tools the request sends.",
		is:  journal.ErrStaleManifest,
		as:  new(*manifest.RuleError),
		raise: func(e *env) error {
			return refusedTools(e, `[]`)
		},
	},
	{
		pkg: "transport",
		doc: "`RoundTrip` of a request that sends a tool whose guidance was gated out of the prompt (rule `tool_gated_out`; `ID` the fragment, `Got` the tool): the model would be given a tool its prompt says nothing of. Nothing is sent or journaled.",
		is:  journal.ErrStaleManifest,
		as:  new(*manifest.RuleError),
		raise: func(e *env) error {
			return refusedTools(e, `[{"name":"read_file"},{"name":"run_shell"}]`)
		},
	},
	{
		pkg: "witness",
		doc: "`witness.NewVerifier` given a note verifier key (type 0x01, from `note.GenerateKey` or `promptloom keygen`): a witness cosigns with a cosignature/v1 key (type 0x04), from `promptloom keygen --witness`, so a note key is never taken for a witness's. A key that is not of the form name+hash+base64, or whose hash does not match, is refused the same way.",
		is:  witness.ErrBadKey,
		raise: func(e *env) error {
			_, vkey, err := note.GenerateKey(rand.Reader, "w1")
			if err != nil {
				e.Fatal(err)
			}
			_, err = witness.NewVerifier(vkey)
			return err
		},
	},
}

// refusedTools sends an Anthropic request with the given tools through
// the transport, for a prompt gated on read_file (run_shell's guidance
// gated out), and returns RoundTrip's error.
func refusedTools(e *env, tools string) error {
	r, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful."),
		promptloom.ToolGuidance("read_file", "Read before you edit."), promptloom.ToolGuidance("run_shell", "Never run rm.")},
		&promptloom.Options{Tools: []string{"read_file"}})
	if err != nil {
		e.Fatal(err)
	}
	sent := false
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { sent = true; return nil, errors.New("sent") })
	j := journal.New(io.Discard, nil)
	defer j.Close()
	body := fmt.Sprintf(`{"model":"m","max_tokens":8,"system":%q,"messages":[{"role":"user","content":"hi"}],"tools":%s}`, r.System, tools)
	req, _ := http.NewRequestWithContext(transport.With(context.Background(), &transport.Call{Name: "c1", Manifest: manifest.New(r, "agent"), System: r.System}),
		"POST", "https://api.anthropic.com/v1/messages", strings.NewReader(body))
	_, err = transport.New(base, j, nil).RoundTrip(req)
	if sent {
		e.Fatal("the refused request was sent")
	}
	return err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// execSQL runs one statement in the database at url.
func execSQL(e *env, url, stmt string) {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		e.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), stmt); err != nil {
		e.Fatal(err)
	}
}

// careful is the reduction of one fragment, "You are careful.".
func careful(e *env) *promptloom.Reduction {
	r, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
	if err != nil {
		e.Fatal(err)
	}
	return r
}

// renamed is err with another message.
type renamed struct {
	err error
	msg string
}

func (r renamed) Error() string { return r.msg }
func (r renamed) Unwrap() error { return r.err }

func nop(id string) stage.Stage {
	return stage.Stage{ID: id, Capability: "core",
		Compile: func(context.Context, map[string]any, []promptloom.Fragment) ([]promptloom.Fragment, error) {
			return nil, nil
		}}
}

func run(stages ...stage.Stage) error {
	_, err := stage.Run(context.Background(), nil, stages)
	return err
}

type twoSlices struct {
	Log   *provenance.Slice[eventlog.Event]
	Brief *provenance.Given[string]
}

type beliefGrant struct {
	Beliefs *provenance.BeliefSlice
}

type chronicleGrant struct {
	Chronicle *provenance.Slice[provenance.Section]
}

func noParts(context.Context, twoSlices) ([]provenance.Part, error) { return nil, nil }

// logOf returns a memory log of n notes.
func logOf(e *env, n int) eventlog.Store {
	store := eventlog.NewMemory(nil)
	for range n {
		if _, err := store.Append(context.Background(), eventlog.Draft{Kind: "note", Payload: "x"}); err != nil {
			e.Fatal(err)
		}
	}
	return store
}

// chronicleOf returns a grant of a chronicle of one section.
func chronicleOf(e *env) chronicleGrant {
	store := logOf(e, 1)
	if _, err := provenance.CloseSection(context.Background(), store, "round-1", 1, 1, nil,
		func(context.Context, []eventlog.Event) (string, error) { return "one note", nil }); err != nil {
		e.Fatal(err)
	}
	ch := &provenance.Chronicle{}
	if err := provenance.CatchUp(context.Background(), store, ch); err != nil {
		e.Fatal(err)
	}
	return chronicleGrant{provenance.OpenChronicle(store, ch, 2, provenance.All)}
}

// reduceUnder reduces a one-fragment prompt under b: how a budget is used.
func reduceUnder(b *budget.Budget) error {
	_, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("rules")}, &promptloom.Options{Budget: b})
	return err
}
