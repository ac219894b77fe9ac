// Command anthropic is a harness on the official Anthropic Go SDK that
// adopts promptloom: the system prompt comes from options (explain), the
// SDK's HTTP client goes through promptloom's transport, and every call
// lands in a verifiable transcript. It runs a two-turn conversation, both
// turns streamed: the model asks for read_file, the harness runs it and
// sends the result back, the model answers.
//
// It needs no API key: it starts its own fake Anthropic API (httptest,
// speaking the Messages wire format and its SSE stream). Point the client
// at the real API and nothing else changes.
//
//	go run ./examples/anthropic run.jsonl
//	promptloom verify --transcript run.jsonl
//
// With PROMPTLOOM_EXAMPLE_SECRET set, its value goes into the user's
// message: the transcript keeps it redacted, and still verifies.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transport"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// options is the harness's prompt, in Harn's options shape: a role, how
// to work, and two tools with their guidance.
const options = `{
  "system": [
    {"title": "Role", "content": "You are the harness's coding agent. Read before you answer."},
    {"title": "How you work", "content": "Work in small steps, and say what you are about to do before you do it. Read the code you are asked about before you answer: quote the lines that support what you say, with their file and line number. When the question is about behaviour, find the test that shows it, or say that there is none. When you propose a change, show it as a diff against the file as you read it, and say why each part of it is needed. Do not change code you were not asked to change; if you notice a problem elsewhere, mention it at the end of your answer instead. When you are not sure, say what you would check and how, rather than guess. When a tool fails, read its error and act on it; do not repeat the same call. Keep answers short: a paragraph of explanation and the code that matters, not a tour of the repository."}
  ],
  "tools": [
    {"name": "read_file", "guidance": "Read a file before you describe it."},
    {"name": "grep", "guidance": "Search with grep before you guess a path."}
  ],
  "call_role": "agent.main"
}`

// The tools' definitions are written as a real harness writes its own:
// whole paragraphs a model acts on. With the system prompt they are the
// stable head of every request, and past the model's minimum cacheable
// length (1,024 tokens for Claude Sonnet 5.5), so the breakpoint on the
// system block caches them: turn 2 reads what turn 1 wrote.
var tools = []anthropic.ToolUnionParam{
	{OfTool: &anthropic.ToolParam{Name: "read_file", Description: anthropic.String(readFileDescription),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{
			"path":   map[string]any{"type": "string", "description": "The file's path, relative to the root of the repository."},
			"offset": map[string]any{"type": "integer", "description": "The first line to return, counted from 1. Default 1."},
			"limit":  map[string]any{"type": "integer", "description": "How many lines to return. Default 2000."}},
			Required: []string{"path"}}}},
	{OfTool: &anthropic.ToolParam{Name: "grep", Description: anthropic.String(grepDescription),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{
			"pattern": map[string]any{"type": "string", "description": "A regular expression, in RE2 syntax."},
			"path":    map[string]any{"type": "string", "description": "The directory to search, relative to the root. Default the root."},
			"glob":    map[string]any{"type": "string", "description": "Only files whose names match this glob, such as *.go."}},
			Required: []string{"pattern"}}}},
}

const readFileDescription = `Read a file from the repository and return its contents, with line numbers.

Use this tool whenever you need to know what a file says: before you describe it, before you quote it, and before you propose a change to it. Never describe a file from its name alone, and never assume that a file still says what it said earlier in the conversation: files change, so read them again when it matters.

The path is relative to the root of the repository. Directories cannot be read; search with grep to find the file you want, then read it. Binary files are refused with an error that says so.

A file is returned whole when it is shorter than 2,000 lines. A longer file is cut after line 2,000, and the result ends with a note that says how many lines were left out; ask for the rest with offset, the first line to return, and limit, how many lines to return.

Each line of the result starts with its number and a tab, so that you can point to a line exactly when you explain the code or propose an edit. The numbers are not part of the file: leave them out when you quote it.

When a read fails (no such file, no permission, a path outside the repository), the result says why. Do not retry the same path; search for the file instead, or ask the user where it is.`

const grepDescription = `Search the files of the repository for a regular expression and return the lines that match, each with its file and line number.

Use this tool to find where something is defined or used before you guess a path or a name: a function, a type, a configuration key, an error message. Prefer one precise pattern to several vague ones, and narrow the search with path and glob when you know where to look.

The pattern is a regular expression in RE2 syntax: no lookahead, no backreferences. Escape the characters that have a meaning in it (dots, brackets, parentheses) when you mean them literally. The search is case-sensitive; start the pattern with (?i) to ignore case.

Files the repository ignores (its .gitignore), binary files and files over one megabyte are not searched. The result lists at most 200 matches, sorted by file and line, and says when there were more: make the pattern more precise rather than asking for the rest.

A match is shown as path:line: text, the text cut at 300 characters. To see the code around a match, read the file with read_file, starting a few lines before it.

When nothing matches, the result says so. That is an answer, not an error: the thing you looked for is not in the files searched, so check the pattern and the path before you conclude it does not exist.`

// readFile is the harness's tool.
func readFile(string) string { return "package main\n\nfunc main() { serve() }\n" }

func run(transcript string, out io.Writer, baseURL string) error {
	e, err := explain.Explain([]byte(options), nil) // promptloom
	if err != nil {                                 // promptloom
		return err // promptloom
	}
	j, err := journal.Open(transcript, nil) // promptloom
	if err != nil {                         // promptloom
		return err // promptloom
	}
	rt := transport.New(nil, j, nil)          // promptloom
	httpClient := &http.Client{Transport: rt} // promptloom
	client := anthropic.NewClient(option.WithHTTPClient(httpClient), option.WithBaseURL(baseURL), option.WithAPIKey("not-needed"))
	err = converse(client, e, out)     // promptloom
	return errors.Join(err, j.Close()) // promptloom
}

// converse runs the conversation: two turns, each streamed, the first
// asking for a tool.
func converse(client anthropic.Client, e *explain.Explanation, out io.Writer) error { // promptloom
	system := []anthropic.TextBlockParam{{Text: e.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}} // promptloom
	question := "What does main.go do?"
	if secret := os.Getenv("PROMPTLOOM_EXAMPLE_SECRET"); secret != "" {
		question += " My token is " + secret + "."
	}
	messages := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(question))}
	for turn := 1; turn <= 2; turn++ {
		ctx := transport.With(context.Background(), &transport.Call{Name: fmt.Sprintf("turn-%d", turn), Explanation: e}) // promptloom
		stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024, System: system, Tools: tools, Messages: messages})
		var reply anthropic.Message
		for stream.Next() {
			if err := reply.Accumulate(stream.Current()); err != nil {
				return err
			}
		}
		if err := stream.Err(); err != nil {
			return err
		}
		messages = append(messages, reply.ToParam())
		var results []anthropic.ContentBlockParamUnion
		for _, block := range reply.Content {
			switch b := block.AsAny().(type) {
			case anthropic.TextBlock:
				fmt.Fprintf(out, "turn %d: %s\n", turn, b.Text)
			case anthropic.ToolUseBlock:
				fmt.Fprintf(out, "turn %d: %s %s\n", turn, b.Name, b.Input)
				results = append(results, anthropic.NewToolResultBlock(b.ID, readFile(string(b.Input)), false))
			}
		}
		if len(results) == 0 {
			break
		}
		messages = append(messages, anthropic.NewUserMessage(results...))
	}
	return nil
}

// fakeAnthropic stands in for api.anthropic.com: turn 1 asks for
// read_file, turn 2 answers. Its usage is what Anthropic's documented
// rules (docs/caching.md) make of these two requests, counted a token
// every four bytes as promptloom estimates them: turn 1 writes the
// 1,078 tokens of the tools and the system prompt at the system block's
// breakpoint, turn 2 reads them; the messages are neither. So the first
// cache verdict a newcomer sees is the rules' own.
func fakeAnthropic() *fakeprovider.Server {
	return fakeprovider.New(
		fakeprovider.Reply{Text: "Let me read it.", ToolCalls: []fakeprovider.ToolCall{{Name: "read_file", Arguments: `{"path":"main.go"}`}},
			Usage: fakeprovider.Usage{Input: 6, Output: 18, CacheWrite: 1078}},
		fakeprovider.Reply{Text: "main.go starts the server: main calls serve.",
			Usage: fakeprovider.Usage{Input: 70, Output: 12, CacheRead: 1078}})
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: anthropic TRANSCRIPT")
		os.Exit(2)
	}
	fake := fakeAnthropic()
	defer fake.Close()
	if err := run(os.Args[1], os.Stdout, fake.URL); err != nil {
		fmt.Fprintln(os.Stderr, "anthropic:", err)
		os.Exit(1)
	}
}
