package explain

import (
	"context"
	"fmt"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/harn/reminder"
	"github.com/promptloom/promptloom/project"
	"github.com/promptloom/promptloom/stage"
)

// Every contributor of Harn's options is a stage, registered like a
// caller's: resolution stages name the active tools and capabilities (and,
// with Options.Project, the project's profile; with reminders, their rendering),
// compilation stages append each contributor's fragments in Harn's build
// order, and kernel.prompt checks the result.

// Names of resolved values the explain pipeline reads.
const (
	ResolvedTools        = "tools"
	ResolvedCapabilities = "capabilities"
	ResolvedReminders    = "reminders"
	// CapsPrefix: a caller's resolution stage that resolves a []string
	// under a name starting with "caps." adds those capabilities.
	CapsPrefix = "caps."
)

// RenderedReminders is the resolved value of core.reminders.
type RenderedReminders struct {
	reminder.Rendered
	// Removed counts pending reminders replaced by a later one with the
	// same dedupe key.
	Removed int `json:"removed"`
}

func corePlan(o *options.Options, cfg *Options) (*stage.Plan, error) {
	resolve := func(id, name string, value func() (any, string, error)) stage.Stage {
		return stage.Stage{ID: id, Capability: "core", Kind: stage.Resolution,
			Handler: func(context.Context, stage.Input) (any, error) {
				v, why, err := value()
				if err != nil || v == nil {
					return nil, err
				}
				return &stage.Resolved{Name: name, Value: v, Reason: why}, nil
			}}
	}
	compile := func(id string, add []promptloom.Fragment) stage.Stage {
		return stage.Stage{ID: id, Capability: "core", Kind: stage.Compilation, ReadOnly: true,
			Handler: func(_ context.Context, in stage.Input) (any, error) {
				switch {
				case len(add) == 0:
					return nil, nil
				case len(in.Fragments) == 0:
					return add, nil // the contributor's own new list
				}
				return append(in.Fragments, add...), nil
			}}
	}
	stages := []stage.Stage{
		resolve("core.tools", ResolvedTools, func() (any, string, error) {
			t := o.ActiveTools()
			return t, strings.Join(t, ", "), nil
		}),
		resolve("core.capabilities", ResolvedCapabilities, func() (any, string, error) {
			c := o.AllCapabilities()
			return c, strings.Join(c, ", "), nil
		}),
	}
	if cfg.Project != "" {
		has := cfg.EnvHas
		if has == nil {
			has = project.EnvHas
		}
		stages = append(stages, project.Resolution(cfg.Project, has))
	}
	if len(o.Reminders) > 0 {
		stages = append(stages, resolve("core.reminders", ResolvedReminders, func() (any, string, error) {
			return renderReminders(o.Reminders)
		}))
	}
	stages = append(stages,
		compile("core.system", o.System),
		compile("core.primary", o.Primary),
		compile("core.profile", o.Profile),
	)
	if cfg.Project != "" && o.Replacement == nil {
		stages = append(stages, project.Compilation())
	}
	stages = append(stages, compile("core.guidance", o.Guidance), stage.KernelPrompt())
	plan, err := stage.NewPlan(stages...)
	if err != nil {
		return nil, err
	}
	if err := plan.Add(cfg.Stages...); err != nil {
		return nil, err
	}
	return plan, nil
}

// renderReminders injects the reminders in order and renders the pending
// ones: they go in a trailing user message, never in the system string.
func renderReminders(rs []reminder.Reminder) (any, string, error) {
	var set reminder.Set
	removed := 0
	for _, r := range rs {
		n, err := set.Inject(r)
		if err != nil {
			return nil, "", err
		}
		removed += n
	}
	rendered := reminder.Render(set.Pending())
	return &RenderedReminders{Rendered: rendered, Removed: removed},
		fmt.Sprintf("%d pending, %d replaced", len(rendered.Rows), removed), nil
}

// activeSet gathers the active tools and capabilities from the snapshot
// (the options', the project's, and any a caller resolved under caps.*),
// with the budget, as the reducer's options.
func activeSet(snap stage.Snapshot, b *budget.Budget) *promptloom.Options {
	tools, _ := stage.Lookup[[]string](snap, ResolvedTools)
	caps, _ := stage.Lookup[[]string](snap, ResolvedCapabilities)
	caps = append([]string(nil), caps...)
	if p, ok := stage.Lookup[*project.Profile](snap, "project"); ok {
		caps = append(caps, p.Caps...)
	}
	for _, name := range snap.Names() {
		if strings.HasPrefix(name, CapsPrefix) {
			extra, _ := stage.Lookup[[]string](snap, name)
			caps = append(caps, extra...)
		}
	}
	return &promptloom.Options{Tools: tools, Capabilities: caps, Budget: b}
}
