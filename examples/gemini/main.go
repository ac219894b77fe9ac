// Command gemini is a harness on the official Gemini Go SDK (genai) that
// adopts promptloom: the system prompt comes from options (explain), the
// SDK's HTTP client goes through promptloom's transport, and every call
// lands in a verifiable transcript. It runs a two-turn conversation, both
// turns streamed: the model asks for read_file, the harness runs it and
// sends the result back, the model answers.
//
// The system prompt is the request's system_instruction. It needs no API
// key: it starts its own fake Gemini API (httptest, speaking
// generateContent's wire format and streamGenerateContent's SSE stream).
// Point the client at the real API and nothing else changes.
//
//	go run ./examples/gemini run.jsonl
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

	"google.golang.org/genai"
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

var tools = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
	{Name: "read_file", Description: "Read a file", Parameters: &genai.Schema{Type: genai.TypeObject,
		Properties: map[string]*genai.Schema{"path": {Type: genai.TypeString}}}},
	{Name: "grep", Description: "Search files", Parameters: &genai.Schema{Type: genai.TypeObject,
		Properties: map[string]*genai.Schema{"pattern": {Type: genai.TypeString}}}},
}}}

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
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "not-needed", Backend: genai.BackendGeminiAPI,
		HTTPClient: httpClient, HTTPOptions: genai.HTTPOptions{BaseURL: baseURL}})
	if err == nil {
		err = converse(client, e, out) // promptloom
	}
	return errors.Join(err, j.Close()) // promptloom
}

// converse runs the conversation: two turns, each streamed, the first
// asking for a tool.
func converse(client *genai.Client, e *explain.Explanation, out io.Writer) error { // promptloom
	config := &genai.GenerateContentConfig{Tools: tools,
		SystemInstruction: genai.NewContentFromText(e.System, genai.RoleUser)} // promptloom
	question := "What does main.go do?"
	if secret := os.Getenv("PROMPTLOOM_EXAMPLE_SECRET"); secret != "" {
		question += " My token is " + secret + "."
	}
	contents := []*genai.Content{genai.NewContentFromText(question, genai.RoleUser)}
	for turn := 1; turn <= 2; turn++ {
		ctx := transport.With(context.Background(), &transport.Call{Name: fmt.Sprintf("turn-%d", turn), Explanation: e}) // promptloom
		reply := &genai.Content{Role: genai.RoleModel}
		var text string
		var calls []*genai.FunctionCall
		for chunk, err := range client.Models.GenerateContentStream(ctx, "gemini-2.5-flash", contents, config) {
			if err != nil {
				return err
			}
			if len(chunk.Candidates) == 0 || chunk.Candidates[0].Content == nil {
				continue
			}
			for _, part := range chunk.Candidates[0].Content.Parts {
				reply.Parts = append(reply.Parts, part)
				text += part.Text
				if part.FunctionCall != nil {
					calls = append(calls, part.FunctionCall)
				}
			}
		}
		contents = append(contents, reply)
		if text != "" {
			fmt.Fprintf(out, "turn %d: %s\n", turn, text)
		}
		for _, call := range calls {
			fmt.Fprintf(out, "turn %d: %s %v\n", turn, call.Name, call.Args)
			path, _ := call.Args["path"].(string)
			contents = append(contents, genai.NewContentFromFunctionResponse(call.Name, map[string]any{"content": readFile(path)}, genai.RoleUser))
		}
		if len(calls) == 0 {
			break
		}
	}
	return nil
}

// fakeGemini stands in for generativelanguage.googleapis.com: turn 1 asks
// for read_file, turn 2 answers, its prompt read from the cache.
func fakeGemini() *fakeprovider.Server {
	return fakeprovider.New(
		fakeprovider.Reply{Text: "Let me read it.", ToolCalls: []fakeprovider.ToolCall{{Name: "read_file", Arguments: `{"path":"main.go"}`}},
			Usage: fakeprovider.Usage{Input: 660, Output: 18}},
		fakeprovider.Reply{Text: "main.go starts the server: main calls serve.",
			Usage: fakeprovider.Usage{Input: 695, Output: 12, CacheRead: 640}})
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gemini TRANSCRIPT")
		os.Exit(2)
	}
	fake := fakeGemini()
	defer fake.Close()
	if err := run(os.Args[1], os.Stdout, fake.URL); err != nil {
		fmt.Fprintln(os.Stderr, "gemini:", err)
		os.Exit(1)
	}
}
