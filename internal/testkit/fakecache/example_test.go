package fakecache_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
)

// The second request reads what the first wrote at its breakpoint.
func Example() {
	c := &fakecache.Anthropic{Min: 100}
	body := func(user string) []byte {
		return []byte(`{"model":"m","system":[{"type":"text","text":"` + strings.Repeat("a", 800) + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"` + user + `"}]}`)
	}
	now := time.Now()
	first, _ := c.Serve(body("hi"), now)
	second, _ := c.Serve(body("again"), now.Add(time.Minute))
	fmt.Printf("%+v\n%+v\n", first, second)
	// Output:
	// {Input:1 CacheRead:0 CacheWrite:201}
	// {Input:2 CacheRead:201 CacheWrite:0}
}
