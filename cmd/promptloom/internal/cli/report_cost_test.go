package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// report shows each call's cost and the run's, the same money cache
// reports for the same calls: each call line is the call's own figure, and
// the total is their sum.
func TestReportShowsCost(t *testing.T) {
	path := agentTranscript(t)
	// The agent's model, priced by a table of the caller's own.
	prices := filepath.Join(t.TempDir(), "prices.json")
	table := `{"taken":"2026-12-07","source":"a test","models":[{"provider":"anthropic","model":"claude-sonnet-4-5","input":3,"output":15,"cache_read":0.30,"cache_write":{"5m":3.75,"1h":6}}]}`
	if err := os.WriteFile(prices, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "cache", "--transcript", path, "--prices", prices, "--format", "json")
	if code != ExitOK {
		t.Fatalf("cache: exit %d: %s", code, errOut)
	}
	var an struct {
		Calls []struct {
			Priced bool  `json:"priced"`
			Cost   int64 `json:"cost_micro_usd"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(out), &an); err != nil || len(an.Calls) != 6 {
		t.Fatalf("%v: %s", err, out)
	}
	var sum int64
	var want []string
	for _, c := range an.Calls {
		if !c.Priced {
			t.Fatalf("the agent's model is not priced: %s", out)
		}
		sum += c.Cost
		want = append(want, fmt.Sprintf("$%d.%06d", c.Cost/1_000_000, c.Cost%1_000_000))
	}
	code, out, errOut = run(t, "report", "--transcript", path, "--prices", prices)
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	got := regexp.MustCompile(`(?m)^  cost: (\$\d+\.\d{6}) \((reported|predicted)\)`).FindAllStringSubmatch(out, -1)
	if len(got) != len(want) {
		t.Fatalf("%d call cost line(s), want %d:\n%s", len(got), len(want), out)
	}
	for i := range got {
		if got[i][1] != want[i] {
			t.Errorf("call %d costs %s in report, %s in cache", i+1, got[i][1], want[i])
		}
	}
	total := fmt.Sprintf("cost: $%d.%06d in all", sum/1_000_000, sum%1_000_000)
	if !strings.Contains(out, total) || !strings.Contains(out, "  session agent: 6 call(s)") {
		t.Errorf("no %q with its session:\n%s", total, out)
	}
	code, out, _ = run(t, "report", "--transcript", path, "--prices", prices, "--format", "html")
	if code != ExitOK || strings.Count(out, "; cost: $") != 6 {
		t.Errorf("html: exit %d, %d cost(s)", code, strings.Count(out, "; cost: $"))
	}
}

// Without a price for its model, report names the model and shows tokens.
func TestReportNamesAnUnpricedModel(t *testing.T) {
	code, out, errOut := run(t, "report", "--transcript", agentTranscript(t))
	if code != ExitOK || !strings.Contains(out, "model claude-sonnet-4-5 is not in the price table") || strings.Contains(out, "  cost: $") {
		t.Errorf("exit %d: %s%s", code, out, errOut)
	}
}
