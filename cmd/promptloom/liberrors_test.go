package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/postgres"
	"github.com/promptloom/promptloom/harn/reminder"
	"github.com/promptloom/promptloom/internal/testkit/pgtest"
	"github.com/promptloom/promptloom/journal"
	jpostgres "github.com/promptloom/promptloom/journal/postgres"
	"github.com/promptloom/promptloom/journal/replay"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/project"
	"github.com/promptloom/promptloom/provenance"
	"github.com/promptloom/promptloom/stage"

	"github.com/jackc/pgx/v5"
)

// libErrors produces each error the library returns that the command line
// cannot reach, by the misuse that raises it, with the sentinel it must
// match. docs/errors.md documents each by name with its exact message.
var libErrors = map[string]func(t *testing.T) (error, error){
	"reducer.ErrReplacementNotAlone": func(t *testing.T) (error, error) {
		_, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Replacement("x"), promptloom.Primary("y")}, nil)
		return err, promptloom.ErrReplacementNotAlone
	},
	"reducer.ErrEmptyID": func(t *testing.T) (error, error) {
		_, err := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("x"), {Source: "caller", Body: "y"}}, nil)
		return err, promptloom.ErrEmptyID
	},
	"budget.ErrInvalid (binding in the shed order)": func(t *testing.T) (error, error) {
		_, err := (&budget.Budget{Counter: budget.Bytes(), Total: 100, ShedOrder: []budget.Register{budget.Considered, budget.Binding}}).Fit(nil, "")
		return err, budget.ErrInvalid
	},
	"budget.ErrInvalid (a register twice)": func(t *testing.T) (error, error) {
		_, err := (&budget.Budget{Counter: budget.Bytes(), Total: 100, ShedOrder: []budget.Register{budget.Craft, budget.Craft}}).Fit(nil, "")
		return err, budget.ErrInvalid
	},
	"budget.ErrInvalid (no counter)": func(t *testing.T) (error, error) {
		_, err := (&budget.Budget{Counter: nil, Total: 100}).Fit(nil, "")
		return err, budget.ErrInvalid
	},
	"budget.ErrInvalid (a negative total)": func(t *testing.T) (error, error) {
		_, err := (&budget.Budget{Counter: budget.Bytes(), Total: -1}).Fit(nil, "")
		return err, budget.ErrInvalid
	},
	"stage.ErrInvalidStage (a kernel id)": func(t *testing.T) (error, error) {
		return run(nop("kernel.prompt")), stage.ErrInvalidStage
	},
	"stage.ErrInvalidStage (an id in the run)": func(t *testing.T) (error, error) {
		_, err := stage.Run(context.Background(), []stage.Stage{nop("core.system")}, []stage.Stage{nop("core.system")})
		return err, stage.ErrInvalidStage
	},
	"stage.ErrInvalidStage (no handler)": func(t *testing.T) (error, error) {
		return run(stage.Stage{ID: "mine"}), stage.ErrInvalidStage
	},
	"stage.Error (a handler's own error)": func(t *testing.T) (error, error) {
		return run(stage.Stage{ID: "mine", Capability: "harness",
			Compile: func(context.Context, stage.Snapshot, []promptloom.Fragment) ([]promptloom.Fragment, error) {
				return nil, errDiskFull
			}}), errDiskFull
	},
	"stage.ErrMalformed": func(t *testing.T) (error, error) {
		resolve := func(context.Context, stage.Snapshot) (*stage.Resolved, error) {
			return &stage.Resolved{Name: "lang"}, nil
		}
		return run(stage.Stage{ID: "mine", Capability: "harness", Resolve: resolve},
			stage.Stage{ID: "theirs", Capability: "harness", Resolve: resolve}), stage.ErrMalformed
	},
	"stage.ErrPanicked": func(t *testing.T) (error, error) {
		return run(stage.Stage{ID: "mine", Capability: "harness",
			Compile: func(context.Context, stage.Snapshot, []promptloom.Fragment) ([]promptloom.Fragment, error) {
				panic("nil map")
			}}), stage.ErrPanicked
	},
	"provenance.ErrInvalidGrant (not a slice)": func(t *testing.T) (error, error) {
		type grant struct{ Store eventlog.Store }
		_, err := provenance.Assemble(context.Background(), "uk", func(context.Context, grant) ([]provenance.Part, error) { return nil, nil },
			grant{Store: eventlog.NewMemory(nil)}, nil)
		return err, provenance.ErrInvalidGrant
	},
	"provenance.ErrInvalidGrant (two positions)": func(t *testing.T) (error, error) {
		store := logOf(t, 2)
		_, err := provenance.Assemble(context.Background(), "uk", noParts, twoSlices{provenance.OpenLog(store, 2, provenance.All), provenance.NewGiven("brief", 1, "x")}, nil)
		return err, provenance.ErrInvalidGrant
	},
	"provenance.ErrInvalidGrant (used before)": func(t *testing.T) (error, error) {
		store := logOf(t, 2)
		g := twoSlices{provenance.OpenLog(store, 2, provenance.All), provenance.NewGiven("brief", 2, "x")}
		g.Log.Read(context.Background())
		_, err := provenance.Assemble(context.Background(), "uk", noParts, g, nil)
		return err, provenance.ErrInvalidGrant
	},
	"provenance.ErrInvalidGrant (a nil predicate)": func(t *testing.T) (error, error) {
		store := logOf(t, 1)
		_, err := provenance.Assemble(context.Background(), "uk", noParts,
			twoSlices{provenance.OpenLog(store, 1, nil), provenance.NewGiven("brief", 1, "x")}, nil)
		return err, provenance.ErrInvalidGrant
	},
	"provenance.ErrStaleRead": func(t *testing.T) (error, error) {
		store := logOf(t, 1)
		store.Append(context.Background(), eventlog.Draft{Kind: provenance.KindBeliefHeld, Payload: provenance.Belief{Scope: "uk", Text: "x"}})
		beliefs := &provenance.Beliefs{} // never caught up: at 0, behind the slice at 2
		_, err := provenance.Assemble(context.Background(), "uk", func(context.Context, beliefGrant) ([]provenance.Part, error) { return nil, nil },
			beliefGrant{provenance.OpenBeliefs(store, beliefs, 2, provenance.All)}, nil)
		return err, provenance.ErrStaleRead
	},
	"provenance.ErrUncitedSource": func(t *testing.T) (error, error) {
		store := logOf(t, 2)
		_, err := provenance.Assemble(context.Background(), "uk", func(context.Context, twoSlices) ([]provenance.Part, error) {
			return []provenance.Part{{Slot: "leak", Text: "x", Cites: []provenance.Source{provenance.EventSource(2)}}}, nil
		}, twoSlices{provenance.OpenLog(store, 2, provenance.All), provenance.NewGiven("brief", 2, "x")}, nil)
		return err, provenance.ErrUncitedSource
	},
	"provenance.ErrInvalidPart (not labelled generated)": func(t *testing.T) (error, error) {
		_, err := provenance.Assemble(context.Background(), "uk", func(ctx context.Context, g chronicleGrant) ([]provenance.Part, error) {
			sections, err := g.Chronicle.Read(ctx)
			s := sections[0]
			return []provenance.Part{{Slot: "summary", Register: budget.Considered, Text: s.Text,
				Cites: []provenance.Source{provenance.SectionSource(s.ID)}}}, err
		}, chronicleOf(t), nil)
		return err, provenance.ErrInvalidPart
	},
	"provenance.ErrInvalidPart (read, not cited)": func(t *testing.T) (error, error) {
		_, err := provenance.Assemble(context.Background(), "uk", func(ctx context.Context, g chronicleGrant) ([]provenance.Part, error) {
			sections, err := g.Chronicle.Read(ctx)
			return []provenance.Part{{Slot: "summary", Text: sections[0].Text}}, err
		}, chronicleOf(t), nil)
		return err, provenance.ErrInvalidPart
	},
	"provenance.ErrInvalidPart (one slot twice)": func(t *testing.T) (error, error) {
		store := logOf(t, 1)
		_, err := provenance.Assemble(context.Background(), "uk", func(context.Context, twoSlices) ([]provenance.Part, error) {
			return []provenance.Part{{Slot: "a", Text: "x"}, {Slot: "a", Text: "y"}}, nil
		}, twoSlices{provenance.OpenLog(store, 1, provenance.All), provenance.NewGiven("brief", 1, "x")}, nil)
		return err, provenance.ErrInvalidPart
	},
	"eventlog.ErrNoEvent": func(t *testing.T) (error, error) {
		_, err := eventlog.NewMemory(nil).Get(context.Background(), 7)
		return err, eventlog.ErrNoEvent
	},
	"eventlog.ErrEmptyKind": func(t *testing.T) (error, error) {
		_, err := eventlog.NewMemory(nil).Append(context.Background(), eventlog.Draft{Payload: 1})
		return err, eventlog.ErrEmptyKind
	},
	"eventlog.ErrBadPayload": func(t *testing.T) (error, error) {
		_, err := eventlog.NewMemory(nil).Append(context.Background(), eventlog.Draft{Kind: "k", Payload: func() {}})
		return err, eventlog.ErrBadPayload
	},
	"postgres.ErrBadText": func(t *testing.T) (error, error) {
		s, err := postgres.Open(context.Background(), pgtest.URL(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Append(context.Background(), eventlog.Draft{Kind: "k", Actor: "a\x00b", Payload: 1})
		return err, postgres.ErrBadText
	},
	"postgres.ErrSchemaVersion": func(t *testing.T) (error, error) {
		url := pgtest.URL(t)
		s, err := postgres.Open(context.Background(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		execSQL(t, url, `UPDATE eventlog_schema SET version = 2`)
		_, err = postgres.Open(context.Background(), url, nil)
		// the URL names a schema made for this test: show a fixed one
		return renamed{err, strings.ReplaceAll(fmt.Sprint(err), url, "postgres://db.example/log")}, postgres.ErrSchemaVersion
	},
	"journal/postgres fs.ErrNotExist (no tables)": func(t *testing.T) (error, error) {
		url := pgtest.URL(t)
		_, err := jpostgres.Open(context.Background(), url, nil)
		return renamed{err, strings.ReplaceAll(fmt.Sprint(err), url, "postgres://db.example/runs")}, fs.ErrNotExist
	},
	"journal/postgres errors.ErrUnsupported (a newer schema)": func(t *testing.T) (error, error) {
		url := pgtest.URL(t)
		s, err := jpostgres.Open(context.Background(), url, &jpostgres.Options{Migrate: true})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		execSQL(t, url, `UPDATE transcript_schema SET version = 2`)
		_, err = jpostgres.Open(context.Background(), url, nil)
		return renamed{err, strings.ReplaceAll(fmt.Sprint(err), url, "postgres://db.example/runs")}, errors.ErrUnsupported
	},
	"journal/postgres fs.ErrInvalid (a chain name)": func(t *testing.T) (error, error) {
		s, err := jpostgres.Open(context.Background(), pgtest.URL(t), &jpostgres.Options{Migrate: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.Sink("a/b").Append(context.Background(), func(journal.Tail) ([]byte, error) { return []byte("x\n"), nil })
		return err, fs.ErrInvalid
	},
	"eventlog.ErrClosed": func(t *testing.T) (error, error) {
		m := eventlog.NewMemory(nil)
		m.Close()
		_, err := m.Append(context.Background(), eventlog.Draft{Kind: "k", Payload: 1})
		return err, eventlog.ErrClosed
	},
	"reminder.ErrInvalid (a blank body)": func(t *testing.T) (error, error) {
		var s reminder.Set
		_, err := s.Inject(reminder.Reminder{Body: " "})
		return err, reminder.ErrInvalid
	},
	"reminder.ErrInvalid (an unknown authority)": func(t *testing.T) (error, error) {
		var s reminder.Set
		_, err := s.Inject(reminder.Reminder{Body: "b", Authority: "royal"})
		return err, reminder.ErrInvalid
	},
	"reminder.ErrInvalid (a negative TTL)": func(t *testing.T) (error, error) {
		var s reminder.Set
		_, err := s.Inject(reminder.Reminder{Body: "b", TTLTurns: -1})
		return err, reminder.ErrInvalid
	},
	"journal.ErrStaleManifest": func(t *testing.T) (error, error) {
		r, _ := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
		_, err := journal.New(nil, nil).Call(context.Background(), nil,
			journal.Request{Call: "c1", System: "You are careless.", Manifest: manifest.New(r, "agent")})
		return err, journal.ErrStaleManifest
	},
	"journal request body refused": func(t *testing.T) (error, error) {
		r, _ := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
		_, err := journal.New(nil, nil).Call(context.Background(), nil, journal.Request{Call: "c1", System: r.System,
			Manifest: manifest.New(r, "agent"), Body: []byte(`{"system":"You are careless."}`)})
		return err, journal.ErrStaleManifest
	},
	"journal.ErrBodyNotSent": func(t *testing.T) (error, error) {
		r, _ := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
		sent := "/no_think\nYou are careful."
		_, err := journal.New(nil, nil).Call(context.Background(), nil, journal.Request{Call: "c1", System: r.System,
			Manifest: manifest.New(r, "agent"), Sent: &sent, Body: []byte(`{"system":"You are careful."}`)})
		return err, journal.ErrBodyNotSent
	},
	"journal line too long": func(t *testing.T) (error, error) {
		_, err := journal.Verify(strings.NewReader(strings.Repeat("x", 100)+"\n"), &journal.Options{MaxLineBytes: 64})
		return err, promptloom.ErrTooLarge
	},
	"journal.ErrClosed": func(t *testing.T) (error, error) {
		r, _ := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are careful.")}, nil)
		j := journal.New(io.Discard, nil)
		j.Close()
		_, err := j.Call(context.Background(), nil, journal.Request{Call: "c1", System: r.System, Manifest: manifest.New(r, "agent")})
		return err, journal.ErrClosed
	},
	"journal.ErrForeignTranscript": func(t *testing.T) (error, error) {
		path := filepath.Join(t.TempDir(), "harn.jsonl")
		os.WriteFile(path, []byte(`{"type":"system_prompt","content":"x"}`+"\n"), 0o644)
		_, err := journal.Open(path, nil)
		return err, journal.ErrForeignTranscript
	},
	"replay.ErrNoRecording": func(t *testing.T) (error, error) {
		_, err := replay.New(context.Background(), nil, &replay.Options{Mode: replay.Strict})
		return err, replay.ErrNoRecording
	},
	"replay.ErrUnknownMode": func(t *testing.T) (error, error) {
		_, err := replay.New(context.Background(), nil, &replay.Options{Mode: "eager"})
		return err, replay.ErrUnknownMode
	},
	"replay.ErrPinMiss": func(t *testing.T) (error, error) {
		p, _ := replay.New(context.Background(), nil, &replay.Options{Mode: replay.Strict, Recorded: eventlog.NewMemory(nil)})
		_, err := p.Complete(context.Background(), journal.Request{Call: "c1", System: "hello"})
		return err, replay.ErrPinMiss
	},
	"digest.ErrMalformed": func(t *testing.T) (error, error) {
		_, err := digest.Parse("sha256:abc")
		return err, digest.ErrMalformed
	},
	"project.ErrNotADirectory": func(t *testing.T) (error, error) {
		t.Chdir(t.TempDir())
		os.WriteFile("go.mod", nil, 0o644)
		_, err := project.Detect("go.mod", func(string) bool { return false })
		return err, project.ErrNotADirectory
	},
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
		Compile: func(context.Context, stage.Snapshot, []promptloom.Fragment) ([]promptloom.Fragment, error) {
			return nil, nil
		}}
}

func run(stages ...stage.Stage) error {
	_, err := stage.Run(context.Background(), nil, stages)
	return err
}

var errDiskFull = errors.New("disk full")

type twoSlices struct {
	Log   *provenance.Slice[eventlog.Event]
	Brief *provenance.Given[string]
}

type beliefGrant struct {
	Beliefs *provenance.Slice[provenance.Belief]
}

type chronicleGrant struct {
	Chronicle *provenance.Slice[provenance.Section]
}

func noParts(context.Context, twoSlices) ([]provenance.Part, error) { return nil, nil }

func logOf(t *testing.T, n int) eventlog.Store {
	store := eventlog.NewMemory(nil)
	for range n {
		if _, err := store.Append(context.Background(), eventlog.Draft{Kind: "note", Payload: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func chronicleOf(t *testing.T) chronicleGrant {
	store := logOf(t, 1)
	if _, err := provenance.CloseSection(context.Background(), store, "round-1", 1, 1, nil,
		func(context.Context, []eventlog.Event) (string, error) { return "one note", nil }); err != nil {
		t.Fatal(err)
	}
	ch := &provenance.Chronicle{}
	if err := provenance.CatchUp(context.Background(), store, ch); err != nil {
		t.Fatal(err)
	}
	return chronicleGrant{provenance.OpenChronicle(store, ch, 2, provenance.All)}
}

var liberrorRE = regexp.MustCompile("(?s)```liberror\\n([^\\n]+)\\n(.*?)\\n```")

// TestLibraryErrorsDoc: every library error in docs/errors.md is raised by
// the misuse above, matches its sentinel, and has exactly the documented
// message; every misuse above is documented.
func TestLibraryErrorsDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, m := range liberrorRE.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = m[2]
	}
	for name, produce := range libErrors {
		t.Run(name, func(t *testing.T) {
			err, target := produce(t)
			if !errors.Is(err, target) {
				t.Fatalf("got %v, want %v", err, target)
			}
			want, ok := documented[name]
			if !ok {
				t.Fatalf("not in docs/errors.md; its message is:\n%s", err)
			}
			if err.Error() != want {
				t.Errorf("message:\n%s\ndocumented:\n%s", err, want)
			}
		})
	}
	for name := range documented {
		if _, ok := libErrors[name]; !ok && !strings.HasPrefix(name, "-") {
			t.Errorf("docs/errors.md documents %q, which no test raises", name)
		}
	}
}

// execSQL runs one statement in the database at url.
func execSQL(t *testing.T, url, stmt string) {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), stmt); err != nil {
		t.Fatal(err)
	}
}
