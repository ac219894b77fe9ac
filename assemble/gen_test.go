package assemble

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/payload"
)

// genSession writes a coding agent's session, the same on every run: a
// task, then tool calls (Bash, Read, Edit, Grep) and their results, of
// minResult to maxResult bytes (log-uniform), the assistant's remarks,
// and now and then a word from the user; a third of the results carry a
// summary. turns counts every turn.
func genSession(turns, minResult, maxResult int, seed uint64) *Conversation {
	r := rand.New(rand.NewPCG(seed, 44))
	c := &Conversation{Provider: payload.Anthropic, Model: "claude-sonnet-5", Window: 48000, OutputReserve: 4000}
	for _, name := range []string{"Bash", "Read", "Edit", "Grep"} {
		c.Tools = append(c.Tools, Tool{
			Name:        name,
			Description: fmt.Sprintf("%s: %s", name, strings.Repeat("Use it on the repository, one step at a time, and say what you found. ", 6)),
			Schema:      []byte(`{"type":"object","properties":{"arg":{"type":"string","description":"what to run, read, edit or look for"}},"required":["arg"]}`),
		})
	}
	c.System = []promptloom.Fragment{
		{ID: "identity", Body: "You are a careful coding agent working in a Go repository. " + strings.Repeat("Keep the build green; run the tests after each change; explain what you did in a sentence. ", 12)},
		{ID: "style", Body: "Write small commits. " + strings.Repeat("Comments say why, not what. ", 10), Bucket: promptloom.After},
	}
	for _, t := range c.Tools {
		c.System = append(c.System, promptloom.ToolGuidance(t.Name,
			fmt.Sprintf("Prefer %s over guessing: %s", t.Name, strings.Repeat("check before you change, and change one thing at a time. ", 4))))
	}
	words := strings.Fields("func main package return error nil if for range struct type interface go test build vet lint parse token reader writer buffer cache digest manifest request body")
	line := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			fmt.Fprintf(&b, "src/%s/%s.go:%d: ", words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(900)+1)
			for k := 0; k < 8 && b.Len() < n; k++ {
				b.WriteString(words[r.IntN(len(words))])
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
		return b.String()[:n]
	}
	add := func(t Turn) { c.Turns = append(c.Turns, t) }
	add(Turn{ID: "t000", Source: "user", Kind: User, Priority: 100,
		Text: "Task: the parser drops the last token of a file that ends without a newline. Find why, fix it, and add a test."})
	call := 0
	for len(c.Turns) < turns {
		n := len(c.Turns)
		switch {
		case turns-n == 1:
			add(Turn{ID: fmt.Sprintf("t%03d", n), Source: "user", Kind: User, Register: budget.Considered, Priority: 90,
				Text: "Go on."})
		case n%29 == 0:
			add(Turn{ID: fmt.Sprintf("t%03d", n), Source: "user", Kind: User, Register: budget.Considered, Priority: 90,
				Text: "Also keep an eye on " + line(60+r.IntN(100))})
		case r.IntN(4) == 0 && c.Turns[n-1].Kind != Assistant:
			add(Turn{ID: fmt.Sprintf("t%03d", n), Source: "model", Kind: Assistant, Register: budget.Considered, Priority: 60,
				Text: "Looking at it: " + line(80+r.IntN(300))})
		default:
			call++
			tool := c.Tools[r.IntN(len(c.Tools))].Name
			id := fmt.Sprintf("call_%03d", call)
			add(Turn{ID: fmt.Sprintf("t%03d", n), Source: "model", Kind: ToolCall, Register: budget.Considered, Priority: 50,
				Call: id, Tool: tool, Input: []byte(fmt.Sprintf(`{"arg":%q}`, line(20+r.IntN(60))))})
			size := int(float64(minResult) * math.Exp(r.Float64()*math.Log(float64(maxResult)/float64(minResult))))
			res := Turn{ID: fmt.Sprintf("t%03d", n+1), Source: "tool:" + tool, Kind: ToolResult, Register: budget.Considered, Priority: 20,
				Call: id, Text: line(size)}
			if r.IntN(3) == 0 {
				res.Summary = fmt.Sprintf("%s output, %d bytes, summarised: %s", tool, size, line(120))
			}
			add(res)
		}
	}
	return c
}

// fileOf writes c in the file form Read reads (docs/assemble.md).
func fileOf(t testing.TB, c *Conversation) []byte {
	t.Helper()
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Schema      json.RawMessage `json:"input_schema,omitempty"`
		Guidance    string          `json:"guidance,omitempty"`
	}
	type system struct {
		ID       string `json:"id"`
		Source   string `json:"source,omitempty"`
		Body     string `json:"body"`
		Position string `json:"position,omitempty"`
	}
	type turn struct {
		ID       string          `json:"id"`
		Source   string          `json:"source,omitempty"`
		Kind     string          `json:"kind"`
		Text     string          `json:"text,omitempty"`
		Call     string          `json:"call,omitempty"`
		Tool     string          `json:"tool,omitempty"`
		Input    json.RawMessage `json:"input,omitempty"`
		IsError  bool            `json:"is_error,omitempty"`
		Register string          `json:"register,omitempty"`
		Priority int             `json:"priority,omitempty"`
		Task     bool            `json:"task,omitempty"`
		Summary  string          `json:"summary,omitempty"`
	}
	var f struct {
		Provider      string   `json:"provider"`
		Model         string   `json:"model"`
		Window        int      `json:"window"`
		OutputReserve int      `json:"output_reserve"`
		Tools         []tool   `json:"tools"`
		System        []system `json:"system"`
		Turns         []turn   `json:"turns"`
	}
	f.Provider, f.Model, f.Window, f.OutputReserve = string(c.Provider), c.Model, c.Window, c.OutputReserve
	guidance := map[string]string{}
	for _, x := range c.System {
		if len(x.RequiresTools) == 1 && x.ID == "tool:"+x.RequiresTools[0]+".guidance" {
			guidance[x.RequiresTools[0]] = x.Body // the file gives it with its tool
			continue
		}
		pos := ""
		if x.Bucket == promptloom.After {
			pos = "after"
		}
		f.System = append(f.System, system{x.ID, x.Source, x.Body, pos})
	}
	for _, x := range c.Tools {
		f.Tools = append(f.Tools, tool{x.Name, x.Description, x.Schema, guidance[x.Name]})
	}
	for _, x := range c.Turns {
		reg := ""
		if x.Register != budget.Binding {
			reg = x.Register.String()
		}
		f.Turns = append(f.Turns, turn{x.ID, x.Source, x.Kind, x.Text, x.Call, x.Tool, x.Input, x.IsError, reg, x.Priority, x.Task, x.Summary})
	}
	b, err := json.MarshalIndent(&f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
