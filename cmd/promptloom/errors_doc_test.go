package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/cli"
)

// errcase is one example of docs/errors.md: commands (the last one is
// checked), files, and the exit code and exact output expected.
type errcase struct {
	title    string
	commands [][]string
	files    map[string]string
	exit     int
	output   string
}

// blockRE matches a bold title, any paragraphs of explanation, then the
// errcase block.
var blockRE = regexp.MustCompile("(?s)\\*\\*([^*\\n]+)\\*\\*\\n\\n(?:(?:[^`*\\n]|`[^`])[^\\n]*\\n(?:[^\\n]+\\n)*\\n)*```errcase\\n(.*?)\\n```")

func readErrcases(t *testing.T) []errcase {
	t.Helper()
	doc, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []errcase
	blocks := blockRE.FindAllStringSubmatch(string(doc), -1)
	if n := strings.Count(string(doc), "```errcase"); n != len(blocks) {
		t.Fatalf("docs/errors.md has %d errcase blocks but only %d follow a bold title (and paragraphs): every block must be checked", n, len(blocks))
	}
	for _, m := range blocks {
		c := errcase{title: m[1], files: map[string]string{}}
		lines := strings.Split(m[2], "\n")
		file, quoted := "", false
		var content []string
		flush := func() {
			if file == "" {
				return
			}
			body := strings.Join(content, "\n")
			if quoted {
				var err error
				if body, err = strconv.Unquote(body); err != nil {
					t.Fatalf("%s: %s: %v", c.title, file, err)
				}
			}
			c.files[file] = body
			file, content = "", nil
		}
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			switch {
			case strings.HasPrefix(l, "$ promptloom "):
				c.commands = append(c.commands, strings.Fields(strings.TrimPrefix(l, "$ promptloom ")))
			case strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --"):
				flush()
				name := strings.TrimSuffix(strings.TrimPrefix(l, "-- "), " --")
				name, quoted = strings.CutSuffix(name, " (quoted)")
				file = name
			case strings.HasPrefix(l, "== exit "):
				flush()
				c.exit, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(l, "== exit "), " =="))
				c.output = strings.Join(lines[i+1:], "\n")
				i = len(lines)
			default:
				content = append(content, l)
			}
		}
		out = append(out, c)
	}
	return out
}

// TestErrorsDoc runs every example of docs/errors.md and checks the exit
// code and the exact output: the catalogue cannot drift from the code.
func TestErrorsDoc(t *testing.T) {
	cases := readErrcases(t)
	if len(cases) < 70 {
		t.Fatalf("found %d examples in docs/errors.md", len(cases))
	}
	for _, c := range cases {
		t.Run(c.title, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			var code int
			var out bytes.Buffer
			for _, args := range c.commands {
				out.Reset()
				var stderr bytes.Buffer
				code = cli.Main(args, strings.NewReader(""), &out, &stderr)
				out.Write(stderr.Bytes())
			}
			if code != c.exit {
				t.Errorf("exit %d, want %d (output %q)", code, c.exit, out.String())
			}
			if got := strings.TrimRight(out.String(), "\n"); got != c.output {
				t.Errorf("output:\n%s\nwant:\n%s", got, c.output)
			}
		})
	}
}

// Every message the CLI fails with directly (e.fail with a literal format)
// has an example in docs/errors.md: the text before its first verb must
// appear in an example's output.
func TestEveryCLIFailureIsDocumented(t *testing.T) {
	var outputs strings.Builder
	for _, c := range readErrcases(t) {
		outputs.WriteString(c.output)
		outputs.WriteByte('\n')
	}
	failRE := regexp.MustCompile(`e\.fail\("((?:[^"\\]|\\.)*)"`)
	files, err := filepath.Glob("internal/cli/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CLI sources: %v", err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range failRE.FindAllStringSubmatch(string(src), -1) {
			format, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			prefix, _, _ := strings.Cut(format, "%")
			if n++; !strings.Contains(outputs.String(), prefix) {
				t.Errorf("%s: no example in docs/errors.md fails with %q", filepath.Base(f), format)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d e.fail calls", n)
	}
}
