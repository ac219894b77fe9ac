package promptloom_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// depsRules is the layering of the module, in the manner of go/build's
// deps_test.go: "a, b < c" means c may import a and b and everything they
// may import. Each package is named once, bottom first; a package named on
// no right-hand side is an error, so a new package must take its place
// here. A package's _test.go files (in the package or beside it) may import
// what the package may, the package itself, and the test kit; nothing
// else, so a library test cannot reach up into the CLI.
//
// Third-party imports are held too: a database driver, a tokenizer or an
// SDK is named where it may be used, and nowhere else.
const depsRules = `
	STD < internal/json, internal/textsafe, internal/dsn, internal/seq;
	STD < internal/redact/internal/url;
	XMOD < internal/witness;
	internal/witness < witness;
	internal/json, internal/redact/internal/url < internal/redact;
	internal/redact < harn/redact;
	harn/redact, BLAKE3 < digest;
	digest, TIKTOKEN < budget;
	budget < internal/fit;
	internal/fit < .;
	digest < harn/reminder;
	. < internal/spans;
	., internal/json, internal/spans < harn/template;
	., harn/reminder, harn/template, internal/json, internal/spans, GJSON < harn/options;
	., internal/json, internal/seq, GJSON < manifest;
	STD < internal/wire;
	manifest, internal/wire < payload;
	payload, budget < request;
	. < stage;
	., internal/json, GJSON < project;
	harn/options, manifest, stage, project, internal/textsafe, GODIFF < explain;
	STD < eventlog/internal/draft, eventlog/internal/wake;
	eventlog/internal/draft, eventlog/internal/wake < eventlog;
	eventlog, SQLITE < eventlog/sqlite;
	PGX < internal/pgschema;
	eventlog, internal/dsn, internal/pgschema, PGX < eventlog/postgres;
	manifest, stage, eventlog < provenance;
	XMOD < journal/tiles;
	., payload, internal/json, XMOD < internal/chain;
	manifest, payload, internal/chain, internal/textsafe, journal/tiles, XMOD < transcript;
	explain, transcript, internal/witness < journal;
	journal, internal/chain, eventlog < journal/replay;
	request, journal, internal/textsafe < cache;
	journal, cache < transcript/report;
	cache, internal/json < assemble;
	journal, internal/dsn, internal/pgschema, PGX < journal/postgres;
	journal < internal/relay;
	journal, cache, internal/relay, OTEL < transport;
	transport, cache, journal/tiles, internal/relay < proxy;
	journal/replay, provenance, eventlog/sqlite, eventlog/postgres < cmd/promptloom/internal/demo;
	cmd/promptloom/internal/demo, transcript/report, journal/postgres, harn/template, internal/witness, witness, cache, assemble, proxy, XMOD, OTELEXPORT < cmd/promptloom/internal/cli;
	cmd/promptloom/internal/cli, transport < cmd/promptloom/internal/errdoc;
	cmd/promptloom/internal/errdoc < cmd/promptloom/internal/errdoc/gendoc;
	cmd/promptloom/internal/errdoc < cmd/promptloom;

	STD < internal/testkit/benchdata, internal/testkit/chromiumtest;
	STD < internal/testkit/corpus, internal/testkit/gosrc, internal/testkit/fakeprovider, internal/testkit/fakecache;
	PGX < internal/testkit/pgtest;
	eventlog < internal/testkit/storetest;
	eventlog/sqlite, eventlog/postgres, internal/testkit/pgtest < internal/testkit/logtest;

	explain, internal/testkit/benchdata < bench/peer;
	proxy, internal/testkit/benchdata < bench/gateway;
	transcript/report, internal/testkit/fakeprovider < internal/testkit/exampletest;

	explain, stage < examples/harness;
	explain, transport, internal/testkit/fakeprovider < examples/anthropic, examples/openai, examples/gemini;
`

// Third-party import path prefixes, by the name the rules use.
var thirdParty = map[string][]string{
	"BLAKE3":   {"github.com/zeebo/blake3"},
	"GJSON":    {"github.com/tidwall/gjson"},
	"GODIFF":   {"github.com/sergi/go-diff"},
	"TIKTOKEN": {"github.com/tiktoken-go/tokenizer"},
	"PGX":      {"github.com/jackc/pgx/v5"},
	"SQLITE":   {"modernc.org/sqlite"},
	"XMOD":     {"golang.org/x/mod"},
	"OTEL":     {"go.opentelemetry.io/otel"},
	// The OTLP exporter is the command's: a library traces to the
	// provider its program gives it, and links no exporter.
	"OTELEXPORT": {"go.opentelemetry.io/otel/exporters"},
}

// testOnly may be imported by any _test.go file: test tools, the
// reference BLAKE3, the official SDKs (tests and examples only).
var testOnly = []string{
	"github.com/google/go-cmp",
	"github.com/rogpeppe/go-internal",
	"lukechampine.com/blake3",
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/openai/openai-go",
	"google.golang.org/genai",
	"go.opentelemetry.io/proto/otlp", // the OTLP receiver's decoding
	"google.golang.org/protobuf",
	module + "/internal/testkit/",
}

const module = "github.com/promptloom/promptloom"

// parseRules returns, for each package, every package and third-party name
// it may import.
func parseRules(t *testing.T) map[string]map[string]bool {
	allowed := map[string]map[string]bool{"STD": {}}
	for name := range thirdParty {
		allowed[name] = map[string]bool{}
	}
	for _, rule := range strings.Split(depsRules, ";") {
		rule = strings.TrimSpace(rule)
		if rule == "" {
			continue
		}
		lhs, rhs, ok := strings.Cut(rule, "<")
		if !ok {
			t.Fatalf("rule %q has no <", rule)
		}
		below := map[string]bool{}
		for _, a := range strings.Split(lhs, ",") {
			a = strings.TrimSpace(a)
			set, ok := allowed[a]
			if !ok {
				t.Fatalf("rule %q: %s is used before it is named", rule, a)
			}
			below[a] = true
			for b := range set {
				below[b] = true
			}
		}
		for _, c := range strings.Split(rhs, ",") {
			c = strings.TrimSpace(c)
			if _, dup := allowed[c]; dup {
				t.Fatalf("rule %q: %s is named twice", rule, c)
			}
			allowed[c] = below
		}
	}
	return allowed
}

// imports lists, per package directory (relative, "." for the root), the
// imports of its non-test files and of its test files.
func imports(t *testing.T) (src, test map[string][]string) {
	src, test = map[string][]string{}, map[string][]string{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		into := src
		if strings.HasSuffix(p, "_test.go") {
			into = test
		}
		if _, ok := into[dir]; !ok {
			into[dir] = nil
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			into[dir] = append(into[dir], ip)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return src, test
}

// check reports why pkg may not import ip, or "" when it may.
func check(allowed map[string]map[string]bool, pkg, ip string, isTest bool) string {
	may := allowed[pkg]
	if rel, ok := strings.CutPrefix(ip, module); ok && (rel == "" || rel[0] == '/') {
		rel = strings.TrimPrefix(rel, "/")
		if rel == "" {
			rel = "."
		}
		if may[rel] || (isTest && (rel == pkg || strings.HasPrefix(ip+"/", module+"/internal/testkit/"))) {
			return ""
		}
		return fmt.Sprintf("imports %s, which does not stand below it", rel)
	}
	first, _, _ := strings.Cut(ip, "/")
	if !strings.Contains(first, ".") {
		return "" // the standard library
	}
	// The longest prefix names the group: OTELEXPORT's lies inside OTEL's.
	group, longest := "", ""
	for name, prefixes := range thirdParty {
		for _, pre := range prefixes {
			if (ip == pre || strings.HasPrefix(ip, pre+"/")) && len(pre) > len(longest) {
				group, longest = name, pre
			}
		}
	}
	if group != "" {
		if may[group] {
			return ""
		}
		return fmt.Sprintf("imports %s (%s), which the rules do not give it", ip, group)
	}
	if isTest || strings.HasPrefix(pkg, "examples/") {
		for _, pre := range testOnly {
			if strings.HasPrefix(ip, strings.TrimSuffix(pre, "/")) {
				return ""
			}
		}
	}
	return fmt.Sprintf("imports %s, a dependency no rule names", ip)
}

// TestDependencies holds every package of the module, and its tests, to
// depsRules.
func TestDependencies(t *testing.T) {
	allowed := parseRules(t)
	src, test := imports(t)
	dirs := map[string]bool{}
	for d := range src {
		dirs[d] = true
	}
	for d := range test {
		dirs[d] = true
	}
	for _, dir := range slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	}) {
		if _, ok := allowed[dir]; !ok {
			t.Errorf("package %s is not in depsRules", dir)
			continue
		}
		for _, ip := range src[dir] {
			if why := check(allowed, dir, ip, false); why != "" {
				t.Errorf("%s %s", dir, why)
			}
		}
		for _, ip := range test[dir] {
			if why := check(allowed, dir, ip, true); why != "" {
				t.Errorf("%s (tests) %s", dir, why)
			}
		}
	}
}

// internal/wire's hooks are set by package payload when it is
// initialised, so a package that calls one must import payload too (for
// the Provider or the Request it passes): then the hooks are set before
// any is called. A test file counts with its package's other files.
func TestWireImportersImportPayload(t *testing.T) {
	src, test := imports(t)
	for _, bad := range wireWithoutPayload(src, test) {
		t.Errorf("%s imports internal/wire but not payload, which sets its hooks", bad)
	}
	// The rule at work: a package importing only internal/wire fails.
	if got := wireWithoutPayload(map[string][]string{"x": {module + "/internal/wire"}}, nil); !slices.Equal(got, []string{"x"}) {
		t.Errorf("a package importing internal/wire alone passes: %v", got)
	}
}

// wireWithoutPayload lists the packages (test files apart) that import
// internal/wire and not payload.
func wireWithoutPayload(src, test map[string][]string) []string {
	var bad []string
	check := func(dir string, ips, with []string) {
		if dir != "payload" && slices.Contains(ips, module+"/internal/wire") &&
			!slices.Contains(ips, module+"/payload") && !slices.Contains(with, module+"/payload") {
			bad = append(bad, dir)
		}
	}
	for dir, ips := range src {
		check(dir, ips, nil)
	}
	for dir, ips := range test {
		check(dir, ips, src[dir])
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// TestDepsRulesCatchUpwardImports shows the rules at work on imports that
// break them: a library test reaching the CLI, and a root package reaching
// up to the manifest.
func TestDepsRulesCatchUpwardImports(t *testing.T) {
	allowed := parseRules(t)
	for _, tt := range []struct {
		pkg, ip string
		test    bool
	}{
		{"journal", module + "/cmd/promptloom/internal/cli", true},
		{".", module + "/manifest", false},
		{"manifest", module + "/explain", true},
		{"explain", "github.com/jackc/pgx/v5", false},
		{"transport", "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp", false},
		{"proxy", "go.opentelemetry.io/proto/otlp/trace/v1", false},
	} {
		if check(allowed, tt.pkg, tt.ip, tt.test) == "" {
			t.Errorf("%s (test %v) importing %s passes the rules", tt.pkg, tt.test, tt.ip)
		}
	}
}

// A harness that explains and journals links no database driver: pgx and
// SQLite come only with the event stores that need them.
func TestExplainAndJournalLinkNoDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gocmd := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(gocmd); err != nil {
		gocmd = "go"
	}
	out, err := exec.Command(gocmd, "list", "-deps", "./explain", "./journal").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, db := range []string{"github.com/jackc/pgx", "modernc.org/sqlite"} {
			if strings.HasPrefix(dep, db) {
				t.Errorf("explain and journal link %s", path.Clean(dep))
			}
		}
	}
}
