package explain

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/promptloom/promptloom/budget"
)

// Explain, the reducer and a budget's shared count cache are safe for
// concurrent use: many goroutines explaining many options at once get what
// one goroutine gets alone (run under -race in CI).
func TestConcurrentExplain(t *testing.T) {
	counter, err := budget.NewCounter("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(31, 32))
	var inputs [][]byte
	for range 40 {
		data, _ := json.Marshal(randOptions(r))
		inputs = append(inputs, data)
	}
	explainAll := func() []string {
		out := make([]string, len(inputs))
		for i, data := range inputs {
			b := &budget.Budget{Counter: counter, Total: 1 << 20}
			e, err := Explain(data, &Options{Budget: b})
			if err != nil {
				out[i] = err.Error()
				continue
			}
			var buf bytes.Buffer
			e.WriteJSON(&buf)
			out[i] = buf.String()
		}
		return out
	}
	want := explainAll()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := explainAll()
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("goroutine %d, input %d: concurrent explanation differs", g, i)
					return
				}
			}
		}()
	}
	wg.Wait()
}
