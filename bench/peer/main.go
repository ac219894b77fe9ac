// Command peer is the manual peer benchmark: it builds the prioritized
// workload (internal/benchdata), renders it with @vscode/prompt-tsx
// (peer.cjs, through node), runs explain.Explain with a byte budget in
// process and the promptloom CLI as a process, and prints the times side
// by side with their ratios, all in one run. run.sh installs prompt-tsx and
// builds the CLI first. CI does not run it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/internal/testkit/benchdata"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == measureArg {
		measure(os.Args[2:])
		return
	}
	if len(os.Args) == 5 && os.Args[1] == libraryArg {
		if err := library(os.Args[2], os.Args[3], os.Args[4] == "inplace"); err != nil {
			fmt.Fprintln(os.Stderr, "peer:", err)
			os.Exit(1)
		}
		return
	}
	n := flag.Int("n", 10000, "fragments")
	runs := flag.Int("runs", 11, "timed runs of the library call and of the CLI")
	peerRuns := flag.Int("peer-runs", 3, "timed renders of prompt-tsx (0: skip the peer)")
	dir := flag.String("dir", "out", "where the workload files go")
	cli := flag.String("cli", "out/promptloom", "the promptloom binary")
	flag.Parse()
	if err := run(*n, *runs, *peerRuns, *dir, *cli); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
}

func run(n, runs, peerRuns int, dir, cli string) error {
	cs := benchdata.Chunks(n)
	data := benchdata.Options(cs)
	total := benchdata.Bytes(cs) / 2
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	optsPath := filepath.Join(dir, "options.json")
	chunksPath := filepath.Join(dir, "chunks.json")
	cj, _ := json.Marshal(cs)
	if err := os.WriteFile(optsPath, data, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(chunksPath, cj, 0o644); err != nil {
		return err
	}
	fmt.Printf("workload: %d fragments, %d bytes of options, budget %d bytes (half), counter bytes\n", n, len(data), total)
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at the start: %s", load)
	}

	var peerMS float64
	if peerRuns > 0 {
		out, err := exec.Command("node", "peer.cjs", chunksPath, strconv.Itoa(total), strconv.Itoa(peerRuns)).Output()
		if err != nil {
			return fmt.Errorf("node peer.cjs: %w", err)
		}
		var res struct {
			Median float64   `json:"median_ms"`
			Runs   []float64 `json:"runs"`
			Tokens int       `json:"tokens"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("peer output %q: %w", out, err)
		}
		peerMS = res.Median
		fmt.Printf("prompt-tsx renderPrompt:        median %9.1f ms  (runs %v; %d tokens kept)\n", res.Median, res.Runs, res.Tokens)
	}

	b := &budget.Budget{Counter: budget.Bytes(), Total: total}
	var lib []float64
	kept := 0
	for i := range runs + 1 {
		start := time.Now()
		x, err := explain.Explain(data, &explain.Options{ParseOptions: options.ParseOptions{MaxBytes: len(data)}, Budget: b})
		if err != nil {
			return err
		}
		if i > 0 { // the first warms up
			lib = append(lib, ms(time.Since(start)))
		}
		kept = x.Budget.Tokens
	}
	libMS := median(lib)
	fmt.Printf("explain.Explain + WithBudget:   median %9.2f ms  (%d bytes kept)\n", libMS, kept)

	base, _, err := peak(cli, "--version")
	if err != nil {
		return err
	}
	var wall []float64
	var rss []int64
	for range runs {
		maxrss, took, err := peak(cli, "explain", "--budget", strconv.Itoa(total), "--counter", "bytes", "--format", "json",
			"--max-bytes", strconv.Itoa(max(len(data), 1)), optsPath)
		if err != nil {
			return err
		}
		wall = append(wall, took)
		rss = append(rss, maxrss)
	}
	cliMS := median(wall)
	slices.Sort(rss)
	top := rss[len(rss)-1]
	fmt.Printf("promptloom explain (process):   median %9.2f ms  peak RSS %.1f MB (runtime baseline %.1f MB: %.2fx the input above it)\n",
		cliMS, mb(top), mb(base), float64(top-base)/float64(len(data)))
	self, err := os.Executable()
	if err != nil {
		return err
	}
	libBase, _, err := peak(self, libraryArg, optsPath, "-", "copy")
	if err != nil {
		return err
	}
	for _, mode := range []string{"copy", "inplace"} {
		libTop, libTook, err := peak(self, libraryArg, optsPath, strconv.Itoa(total), mode)
		if err != nil {
			return err
		}
		fmt.Printf("explain.Explain, own process, %-7s %9.2f ms  peak RSS %.1f MB (baseline %.1f MB: %.2fx the input above it)\n",
			mode+":", libTook, mb(libTop), mb(libBase), float64(libTop-libBase)/float64(len(data)))
	}
	if peerMS > 0 {
		fmt.Printf("ratios in this run: library %.0fx, CLI process %.0fx faster than prompt-tsx\n", peerMS/libMS, peerMS/cliMS)
	}
	return nil
}

// libraryArg makes this program run explain.Explain once, as a harness
// would: read the options file, explain it under a bytes budget, drop the
// result. With the budget "-" it only starts, for the baseline. In place,
// the options are parsed where they were read (options.ParseOptions.InPlace), as a
// harness that owns its buffer may ask; otherwise Explain copies them.
const libraryArg = "-library-child"

func library(path, total string, inPlace bool) error {
	if total == "-" {
		return nil
	}
	n, err := strconv.Atoi(total)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b := &budget.Budget{Counter: budget.Bytes(), Total: n}
	_, err = explain.Explain(data, &explain.Options{ParseOptions: options.ParseOptions{MaxBytes: len(data), InPlace: inPlace}, Budget: b})
	return err
}

// measureArg makes this program a small measuring parent (see peak).
const measureArg = "-measure-child"

// peak runs a command, its output discarded, and returns its peak resident
// set in bytes and its wall time in milliseconds. The command is started
// by a fresh copy of this program, not by this process: Go starts children
// with vfork, and Linux then counts the parent's own peak (here the
// library runs and all their garbage) in the child's, so a child of this
// process would report at least this process's peak. The fresh copy's
// peak is a few MB, below any run of the CLI.
func peak(args ...string) (int64, float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	out, err := exec.Command(self, append([]string{measureArg}, args...)...).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %w", args, err)
	}
	var rss int64
	var took float64
	if _, err := fmt.Sscan(string(out), &rss, &took); err != nil {
		return 0, 0, fmt.Errorf("%v: measuring child said %q: %w", args, out, err)
	}
	return rss, took, nil
}

// measure runs args and prints its peak RSS in bytes and its wall time in
// milliseconds.
func measure(args []string) {
	cmd := exec.Command(args[0], args[1:]...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
	took := ms(time.Since(start))
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // Linux reports KiB
	}
	fmt.Println(rss, took)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
func mb(b int64) float64         { return float64(b) / (1 << 20) }
