package assemble_test

import (
	"fmt"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/assemble"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/payload"
)

// A conversation whose old tool results no longer fit: the oldest is
// cleared, the task and the latest user turn stay whole.
func ExampleAssemble() {
	c := &assemble.Conversation{
		Provider: payload.Anthropic, Model: "claude-sonnet-4-5", Window: 3000, OutputReserve: 500,
		Tools: []assemble.Tool{{Name: "Read", Description: "Read a file."}},
		System: []promptloom.Fragment{
			{ID: "identity", Body: "You are a careful coding agent."},
			promptloom.ToolGuidance("Read", "Read before you edit."),
		},
		Turns: []assemble.Turn{
			{ID: "task", Kind: assemble.User, Text: "Fix the parser."},
			{ID: "c1", Kind: assemble.ToolCall, Call: "r1", Tool: "Read", Input: []byte(`{"path":"parse.go"}`), Register: budget.Considered},
			{ID: "r1", Kind: assemble.ToolResult, Call: "r1", Text: strings.Repeat("func parse() {}\n", 400), Register: budget.Considered},
			{ID: "c2", Kind: assemble.ToolCall, Call: "r2", Tool: "Read", Input: []byte(`{"path":"lex.go"}`), Register: budget.Considered},
			{ID: "r2", Kind: assemble.ToolResult, Call: "r2", Text: strings.Repeat("func lex() {}\n", 100), Register: budget.Considered},
			{ID: "ask", Kind: assemble.User, Text: "And the lexer?", Register: budget.Considered},
		},
	}
	_, m, err := assemble.Assemble(c, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range m.Parts {
		if p.Kind != "tool" && p.Kind != "system" {
			fmt.Printf("%-4s %-11s %-9s %5d tokens\n", p.ID, p.Kind, p.Status, p.Tokens)
		}
	}
	fmt.Println(len(m.Compactions), "compaction,", m.Tokens, "tokens in")
	// Output:
	// task user        included     10 tokens
	// c1   tool_call   included     18 tokens
	// r1   tool_result cleared      54 tokens
	// c2   tool_call   included     18 tokens
	// r2   tool_result included    389 tokens
	// ask  user        included     10 tokens
	// 1 compaction, 540 tokens in
}
