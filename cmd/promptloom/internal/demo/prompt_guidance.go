// Package demo holds runnable scenarios on built-in data: the README's
// main job (prompt-guidance) and the provenance walk-through (negotiation).
// The CLI, the tests and the README run the same code.
package demo

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
)

// promptGuidanceOptions is the scenario's options: a coding agent with three
// tools, one of them todo, and a Go project profile.
//
//go:embed prompt_guidance.json
var promptGuidanceOptions []byte

// PromptGuidance is the prompt with and without the todo tool, and what
// changes between them.
type PromptGuidance struct {
	With, Without *explain.Explanation
	Delta         *explain.Delta
}

// Names of the two sides, as the diff labels them.
const (
	withTodo    = "with todo"
	withoutTodo = "without todo"
)

// RunPromptGuidance explains the scenario's prompt twice: with every tool,
// and with the todo tool declared but inactive, as `promptloom diff
// --without-tool todo` would.
func RunPromptGuidance() (*PromptGuidance, error) {
	o, err := options.Parse(promptGuidanceOptions, nil)
	if err != nil {
		return nil, fmt.Errorf("demo options: %w", err)
	}
	with, err := explain.FromOptions(o, nil)
	if err != nil {
		return nil, err
	}
	// The same options, the todo tool declared but inactive.
	without, _ := options.Parse(promptGuidanceOptions, nil)
	for i := range without.Tools {
		if without.Tools[i].Name == "todo" {
			without.Tools[i].Active = false
		}
	}
	wo, err := explain.FromOptions(without, nil)
	if err != nil {
		return nil, err
	}
	return &PromptGuidance{With: with, Without: wo, Delta: explain.Diff(with, wo, withTodo, withoutTodo)}, nil
}

// WriteText prints both prompts, their provenance side by side and the diff.
func (p *PromptGuidance) WriteText(w io.Writer) error {
	fmt.Fprintln(w, "promptloom demo prompt-guidance: one agent's system prompt, with and without its todo tool.")
	fmt.Fprintln(w, "Each contributor is a fragment; the reducer joins them, the manifest accounts for every byte.")
	for _, side := range []struct {
		name string
		e    *explain.Explanation
	}{{withTodo, p.With}, {withoutTodo, p.Without}} {
		hash, err := side.e.Manifest.ContentHash()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n== the prompt %s (%d bytes, manifest content hash %s)\n%s\n", side.name, side.e.Manifest.SystemPromptBytes, hash, side.e.System)
	}
	fmt.Fprintln(w, "\n== provenance side by side, and the diff")
	return p.Delta.WriteText(w, withTodo, withoutTodo)
}

// Receipt is the JSON form of the demo: the two manifests' content hashes
// and the diff.
type Receipt struct {
	Scenario string         `json:"scenario"`
	With     SideReceipt    `json:"with"`
	Without  SideReceipt    `json:"without"`
	Diff     *explain.Delta `json:"diff"`
}

// SideReceipt names one prompt by its manifest and digest.
type SideReceipt struct {
	ManifestContentHash digest.Digest `json:"manifest_content_hash"`
	WholePromptDigest   digest.Digest `json:"whole_prompt_digest"`
	SystemPromptBytes   int           `json:"system_prompt_bytes"`
}

// Receipt returns the demo's receipt.
func (p *PromptGuidance) Receipt() (*Receipt, error) {
	side := func(e *explain.Explanation) (SideReceipt, error) {
		h, err := e.Manifest.ContentHash()
		return SideReceipt{h, e.Manifest.WholePromptDigest, e.Manifest.SystemPromptBytes}, err
	}
	with, err := side(p.With)
	if err != nil {
		return nil, err
	}
	without, err := side(p.Without)
	if err != nil {
		return nil, err
	}
	return &Receipt{Scenario: "prompt-guidance", With: with, Without: without, Diff: p.Delta}, nil
}

// WriteJSON prints the receipt.
func (p *PromptGuidance) WriteJSON(w io.Writer) error {
	r, err := p.Receipt()
	if err != nil {
		return err
	}
	return writeJSON(w, r)
}

// WriteHTML prints the diff page.
func (p *PromptGuidance) WriteHTML(w io.Writer) error {
	return p.Delta.WriteHTML(w, withTodo, withoutTodo)
}

// writeJSON writes v indented, without HTML escaping (prompts are full of <
// and &).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
