// Command openai is a harness on the official OpenAI Go SDK (v3) that
// adopts promptloom: the system prompt comes from options (explain), the
// SDK's HTTP client goes through promptloom's transport, and every call
// lands in a verifiable transcript. It runs a two-turn conversation, both
// turns streamed: the model asks for read_file, the harness runs it and
// sends the result back, the model answers.
//
// It runs on Chat Completions, where the system prompt is the first
// message. It needs no API key: it starts its own fake OpenAI API
// (httptest, speaking the Chat Completions wire format and its SSE
// stream). Point the client at the real API and nothing else changes.
//
//	go run ./examples/openai run.jsonl
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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
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

var tools = []openai.ChatCompletionToolUnionParam{
	openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "read_file", Description: openai.String("Read a file"),
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}),
	openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "grep", Description: openai.String("Search files"),
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"pattern": map[string]any{"type": "string"}}}}),
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
	rt := transport.New(nil, j, nil)          // promptloom
	httpClient := &http.Client{Transport: rt} // promptloom
	client := openai.NewClient(option.WithHTTPClient(httpClient), option.WithBaseURL(baseURL+"/v1"), option.WithAPIKey("not-needed"))
	err = converse(client, e, out)     // promptloom
	return errors.Join(err, j.Close()) // promptloom
}

// converse runs the conversation: two turns, each streamed, the first
// asking for a tool.
func converse(client openai.Client, e *explain.Explanation, out io.Writer) error { // promptloom
	question := "What does main.go do?"
	if secret := os.Getenv("PROMPTLOOM_EXAMPLE_SECRET"); secret != "" {
		question += " My token is " + secret + "."
	}
	messages := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(e.System), // promptloom
		openai.UserMessage(question),
	}
	for turn := 1; turn <= 2; turn++ {
		ctx := transport.With(context.Background(), &transport.Call{Name: fmt.Sprintf("turn-%d", turn), Explanation: e}) // promptloom
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model: openai.ChatModelGPT5_2, Tools: tools, Messages: messages,
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			return err
		}
		reply := acc.Choices[0].Message
		messages = append(messages, reply.ToParam())
		if reply.Content != "" {
			fmt.Fprintf(out, "turn %d: %s\n", turn, reply.Content)
		}
		for _, call := range reply.ToolCalls {
			fmt.Fprintf(out, "turn %d: %s %s\n", turn, call.Function.Name, call.Function.Arguments)
			messages = append(messages, openai.ToolMessage(readFile(call.Function.Arguments), call.ID))
		}
		if len(reply.ToolCalls) == 0 {
			break
		}
	}
	return nil
}

// fakeOpenAI stands in for api.openai.com: turn 1 asks for read_file,
// turn 2 answers, its prompt read from the cache.
func fakeOpenAI() *fakeprovider.Server {
	return fakeprovider.New(
		fakeprovider.Reply{Text: "Let me read it.", ToolCalls: []fakeprovider.ToolCall{{Name: "read_file", Arguments: `{"path":"main.go"}`}},
			Usage: fakeprovider.Usage{Input: 660, Output: 18}},
		fakeprovider.Reply{Text: "main.go starts the server: main calls serve.",
			Usage: fakeprovider.Usage{Input: 695, Output: 12, CacheRead: 640}})
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: openai TRANSCRIPT")
		os.Exit(2)
	}
	fake := fakeOpenAI()
	defer fake.Close()
	if err := run(os.Args[1], os.Stdout, fake.URL); err != nil {
		fmt.Fprintln(os.Stderr, "openai:", err)
		os.Exit(1)
	}
}
