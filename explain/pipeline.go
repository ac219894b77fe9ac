package explain

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	resolvedTools        = "tools"
	resolvedCapabilities = "capabilities"
	resolvedReminders    = "reminders"
	// resolvedProject is the project's profile, with Options.Project.
	resolvedProject = "project"
	// CapsPrefix: a caller's resolution stage that resolves a []string
	// under a name starting with "caps." adds those capabilities.
	CapsPrefix = "caps."
)

// pipeline runs o's contributors, cfg's project and cfg's stages.
func pipeline(ctx context.Context, o *options.Options, cfg *Options) (*stage.Result, error) {
	resolve := func(id, name string, value func() (any, string, error)) stage.Stage {
		return stage.Stage{ID: id, Capability: "core", Resolves: name,
			Resolve: func(context.Context, map[string]any) (any, string, error) { return value() }}
	}
	compile := func(id, capability string, frags func(map[string]any) []promptloom.Fragment) stage.Stage {
		return stage.Stage{ID: id, Capability: capability, ReadOnly: true,
			Compile: func(_ context.Context, snap map[string]any, in []promptloom.Fragment) ([]promptloom.Fragment, error) {
				add := frags(snap)
				switch {
				case len(add) == 0:
					return nil, nil
				case len(in) == 0:
					return add, nil // the contributor's own new list
				}
				return append(in, add...), nil
			}}
	}
	core := func(id string, frags []promptloom.Fragment) stage.Stage {
		return compile(id, "core", func(map[string]any) []promptloom.Fragment { return frags })
	}
	stages := []stage.Stage{
		resolve("core.tools", resolvedTools, func() (any, string, error) {
			t := o.ActiveTools()
			return t, strings.Join(t, ", "), nil
		}),
		resolve("core.capabilities", resolvedCapabilities, func() (any, string, error) {
			c := slices.Clone(o.Capabilities) // the stages may add to it
			return c, strings.Join(c, ", "), nil
		}),
	}
	if cfg.Project != "" {
		stages = append(stages, stage.Stage{ID: "project.detect", Capability: "project", Resolves: resolvedProject,
			Resolve: func(context.Context, map[string]any) (any, string, error) {
				p, err := project.Detect(cfg.Project, cfg.EnvHas)
				if err != nil {
					return nil, "", err
				}
				return p, "caps " + strings.Join(p.Caps, ", "), nil
			}})
	}
	if len(o.Reminders) > 0 {
		stages = append(stages, resolve("core.reminders", resolvedReminders, func() (any, string, error) {
			return renderReminders(o.Reminders)
		}))
	}
	stages = append(stages,
		core("core.system", o.System),
		core("core.primary", o.Primary),
		core("core.profile", o.Profile),
	)
	if cfg.Project != "" && !(len(o.System) == 1 && o.System[0].Verbatim) { // a replacement root suppresses the profile
		stages = append(stages, compile("project.profile", "project", func(snap map[string]any) []promptloom.Fragment {
			if p, ok := snap[resolvedProject].(*project.Profile); ok {
				return p.Fragments
			}
			return nil
		}))
	}
	stages = append(stages, core("core.guidance", o.Guidance))
	return stage.Run(ctx, stages, cfg.Stages)
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
	rendered := set.Render(nil)
	rendered.Removed = removed
	return &rendered,
		fmt.Sprintf("%d pending, %d replaced", len(rendered.Rows), removed), nil
}

// activeSet gathers the active tools and capabilities from the snapshot
// (the options', the project's, and any a caller resolved under caps.*),
// with the budget, as the reducer's options.
func activeSet(snap map[string]any, b *budget.Budget) *promptloom.Options {
	tools, _ := snap[resolvedTools].([]string)
	caps, _ := snap[resolvedCapabilities].([]string)
	caps = append([]string(nil), caps...)
	if p, ok := snap[resolvedProject].(*project.Profile); ok {
		caps = append(caps, p.Caps...)
	}
	for _, name := range slices.Sorted(maps.Keys(snap)) {
		if strings.HasPrefix(name, CapsPrefix) {
			extra, _ := snap[name].([]string)
			caps = append(caps, extra...)
		}
	}
	return &promptloom.Options{Tools: tools, Capabilities: caps, Budget: b}
}
