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

// options is the harness's prompt, in Harn's options shape: a role, and
// two tools with their guidance.
const options = `{
  "system": [{"title": "Role", "content": "You are the harness's coding agent. Read before you answer."}],
  "tools": [
    {"name": "read_file", "guidance": "Read a file before you describe it."},
    {"name": "grep", "guidance": "Search with grep before you guess a path."}
  ],
  "call_role": "agent.main"
}`

var tools = []anthropic.ToolUnionParam{
	{OfTool: &anthropic.ToolParam{Name: "read_file", Description: anthropic.String("Read a file"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"path": map[string]any{"type": "string"}}}}},
	{OfTool: &anthropic.ToolParam{Name: "grep", Description: anthropic.String("Search files"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"pattern": map[string]any{"type": "string"}}}}},
}

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
	// The SDK retries a failed attempt twice, and the transport is told so.
	rt := transport.New(nil, j, &transport.Options{MaxRetries: 2}) // promptloom
	httpClient := &http.Client{Transport: rt}                      // promptloom
	client := anthropic.NewClient(option.WithHTTPClient(httpClient), option.WithBaseURL(baseURL), option.WithAPIKey("not-needed"))
	err = converse(client, e, out)                 // promptloom
	return errors.Join(err, rt.Close(), j.Close()) // promptloom
}

// converse runs the conversation: two turns, each streamed, the first
// asking for a tool.
func converse(client anthropic.Client, e *explain.Explanation, out io.Writer) error { // promptloom
	system := []anthropic.TextBlockParam{{Text: *e.System}} // promptloom
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
// read_file, turn 2 answers, its prompt read from the cache.
func fakeAnthropic() *fakeprovider.Server {
	return fakeprovider.New(
		fakeprovider.Reply{Text: "Let me read it.", ToolCalls: []fakeprovider.ToolCall{{Name: "read_file", Arguments: `{"path":"main.go"}`}},
			Usage: fakeprovider.Usage{Input: 40, Output: 18, CacheWrite: 620}},
		fakeprovider.Reply{Text: "main.go starts the server: main calls serve.",
			Usage: fakeprovider.Usage{Input: 75, Output: 12, CacheRead: 620}})
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
