package assemble

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
)

// file is the conversation's JSON form (docs/assemble.md).
type file struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	Window        int    `json:"window"`
	OutputReserve int    `json:"output_reserve"`
	Tools         []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"input_schema"`
		Guidance    string          `json:"guidance"`
	} `json:"tools"`
	System []struct {
		ID       string `json:"id"`
		Source   string `json:"source"`
		Body     string `json:"body"`
		Position string `json:"position"`
	} `json:"system"`
	Turns []struct {
		ID       string          `json:"id"`
		Source   string          `json:"source"`
		Kind     string          `json:"kind"`
		Text     string          `json:"text"`
		Call     string          `json:"call"`
		Tool     string          `json:"tool"`
		Input    json.RawMessage `json:"input"`
		IsError  bool            `json:"is_error"`
		Register string          `json:"register"`
		Priority int             `json:"priority"`
		Task     bool            `json:"task"`
		Summary  string          `json:"summary"`
	} `json:"turns"`
}

// Read reads a conversation's JSON form. The document is first held to
// promptloom's one JSON reader (UTF-8, syntax, no key given twice); a
// member the format does not have is an error that names it.
func Read(data []byte) (*Conversation, error) {
	if len(data) > promptloom.DefaultMaxBytes {
		return nil, &Error{Msg: "over the size limit", kind: promptloom.ErrTooLarge}
	}
	if err := pjson.Check(data, nil); err != nil {
		var je *pjson.Error
		if errors.As(err, &je) {
			return nil, invalid("", je.Path, "%s (byte %d)", je.Detail, je.Offset)
		}
		return nil, invalid("", "", "%v", err)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, invalid("", "", "%v", err)
	}
	p, err := payload.ParseProvider(f.Provider)
	if err != nil || p == payload.Auto {
		return nil, invalid("", "provider", "%q (want anthropic, openai-chat, openai-responses or gemini)", f.Provider)
	}
	c := &Conversation{Provider: p, Model: f.Model, Window: f.Window, OutputReserve: f.OutputReserve}
	for _, t := range f.Tools {
		c.Tools = append(c.Tools, Tool{Name: t.Name, Description: t.Description, Schema: raw(t.Schema)})
	}
	for _, s := range f.System {
		if s.Position != "" && s.Position != "before" && s.Position != "after" {
			return nil, invalid(s.ID, "position", "%q (want before or after)", s.Position)
		}
		frag := promptloom.Fragment{ID: s.ID, Source: s.Source, Body: s.Body}
		if s.Position == "after" {
			frag.Bucket = promptloom.After
		}
		c.System = append(c.System, frag)
	}
	// A tool's guidance follows the system items, a fragment gated on
	// the tool, in the tools' order.
	for _, t := range f.Tools {
		if t.Guidance != "" {
			c.System = append(c.System, promptloom.ToolGuidance(t.Name, t.Guidance))
		}
	}
	for _, t := range f.Turns {
		r := budget.Binding
		if t.Register != "" {
			if r, err = budget.ParseRegister(t.Register); err != nil {
				return nil, invalid(t.ID, "register", "%v", err)
			}
		}
		c.Turns = append(c.Turns, Turn{ID: t.ID, Source: t.Source, Kind: t.Kind, Text: t.Text, Call: t.Call, Tool: t.Tool,
			Input: raw(t.Input), IsError: t.IsError, Register: r, Priority: t.Priority, Task: t.Task, Summary: t.Summary})
	}
	return c, nil
}

func raw(m json.RawMessage) []byte {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return m
}
