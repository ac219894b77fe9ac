package fakeprovider_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
)

// A 429 then a tool call, as Anthropic's Messages API sends them.
func Example() {
	s := fakeprovider.New(
		fakeprovider.Reply{Status: 429},
		fakeprovider.Reply{ID: "msg_1", ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"go.mod"}`}},
			Usage: fakeprovider.Usage{Input: 30, Output: 5, CacheRead: 20}})
	defer s.Close()
	for range 2 {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-sonnet-4-5"}`))
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(b))
	}
	fmt.Println(len(s.Requests()), "requests")
	// Output:
	// 429 {"type":"error","error":{"type":"rate_limit_error","message":"Too Many Requests"}}
	// 200 {"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"go.mod"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":30,"cache_creation_input_tokens":0,"cache_read_input_tokens":20,"output_tokens":5,"service_tier":"standard"}}
	// 2 requests
}
