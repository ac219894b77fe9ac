// Package errdoc is the catalogue of the errors promptloom's command line
// and library return, and the generator of docs/errors.md from it.
//
// The command line's cases are txtar archives in
// cmd/promptloom/testdata/errors, a directory per section: section.txtar
// holds the section's heading (its first line), its prose and the files
// every case of it starts with; each other archive is a case, in the order
// of their names, whose comment is a title (its first line), any
// paragraphs of prose, and the commands ("$ promptloom ARGS"), and whose
// files are written beside (or over) the section's. A file's content is
// its lines without the last newline; "NAME (quoted)" holds NAME's content
// as a Go string literal.
//
// The library's cases are Go code, in library.go: each a misuse, the
// sentinel or type its error must match, and what a caller should know.
//
// No case holds its expected output: Generate runs every case, the command
// line through cli.Main in a fresh temporary directory and the library's
// misuses by calling them, and writes what they gave. So the page is what
// the code prints, and a test that regenerates it and compares keeps the
// committed page current. The one exception is a case that needs
// PostgreSQL: it holds its message as recorded against a server, which
// the page shows, and Generate checks it against a live run only when it
// is given a database.
package errdoc

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Options say how Generate runs the catalogue.
type Options struct {
	// Postgres, when set, returns the URL of an empty PostgreSQL database
	// of a case's own, for the cases that need one. When nil those cases
	// are not run, and the page shows their recorded messages.
	Postgres func() string
}

// Page is docs/errors.md and what went into it.
type Page struct {
	// Markdown is the page, as docs/errors.md holds it.
	Markdown []byte
	// Outputs is the output of every command-line case, in page order.
	Outputs []string
	// Unrun names the library cases that needed PostgreSQL and were not
	// run.
	Unrun []string
}

// Generate runs every case of the catalogue and returns the page. dir is
// the directory of cmd/promptloom (the command line's cases are in its
// testdata/errors). A case that cannot be run, or whose error does not
// match what it declares, is an error naming the case (all of them,
// joined); the page is then returned too, as far as it could be made.
//
// Each case runs in a fresh temporary directory that is, while it runs,
// the working directory: Generate must not run beside anything else that
// depends on it.
func Generate(dir string, o *Options) (*Page, error) {
	if o == nil {
		o = &Options{}
	}
	sections, err := readCLI(filepath.Join(dir, "testdata", "errors"))
	if err != nil {
		return nil, err
	}
	var errs []error
	page := &Page{}
	for _, s := range sections {
		for _, c := range s.cases {
			if err := inTempDir(func() error { return s.run(c) }); err != nil {
				errs = append(errs, fmt.Errorf("testdata/errors/%s: %v", c.path, err))
			}
			page.Outputs = append(page.Outputs, c.output)
		}
	}
	cases, err := libraryCases()
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		if c.raise == nil {
			continue
		}
		if c.postgres != "" && o.Postgres == nil {
			c.message = c.postgres
			page.Unrun = append(page.Unrun, c.name())
			continue
		}
		if err := inTempDir(func() error { return c.run(&env{postgres: o.Postgres}) }); err != nil {
			errs = append(errs, fmt.Errorf("internal/errdoc/library.go:%d: %s: %v", c.line, c.name(), err))
		}
	}
	page.Markdown = render(sections, cases)
	return page, errors.Join(errs...)
}

// inTempDir runs f in a new temporary directory, then returns to the
// working directory and removes it.
func inTempDir(f func() error) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "promptloom-errdoc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Chdir(dir); err != nil {
		return err
	}
	defer os.Chdir(wd)
	return f()
}

// run raises the case's error and checks it matches what the case
// declares.
func (c *libCase) run(e *env) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(fatal); ok {
				err = fmt.Errorf("setting up: %s", string(f))
				return
			}
			panic(r)
		}
	}()
	got := c.raise(e)
	if got == nil {
		return errors.New("no error")
	}
	if c.is != nil && !errors.Is(got, c.is) {
		return fmt.Errorf("%q does not match %s", got, c.isName)
	}
	if c.as != nil && !errors.As(got, c.as) {
		return fmt.Errorf("%q (%T) is not a %s", got, got, c.asName)
	}
	c.message = got.Error()
	if c.postgres != "" && c.message != c.postgres {
		return fmt.Errorf("the message is now %q; record it in the case", c.message)
	}
	return nil
}

// env is what a library case gets besides its working directory.
type env struct {
	postgres func() string
}

// Postgres returns the URL of an empty PostgreSQL database of the case's
// own.
func (e *env) Postgres() string {
	if e.postgres == nil {
		e.Fatal("no PostgreSQL database: the case must set postgres")
	}
	return e.postgres()
}

// Fatal stops a case whose setup failed: a fault of the catalogue, not the
// error the case shows.
func (e *env) Fatal(args ...any) { panic(fatal(fmt.Sprint(args...))) }

type fatal string

// The page's introduction, and that of its library half.
var (
	//go:embed intro.md
	intro string
	//go:embed library.md
	libraryIntro string
)

// render writes the page.
func render(sections []*section, cases []*libCase) []byte {
	var b bytes.Buffer
	b.WriteString(intro)
	b.WriteString("\n## Command line\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "\n### %s\n", s.heading)
		if s.prose != "" {
			fmt.Fprintf(&b, "\n%s\n", s.prose)
		}
		if len(s.files) > 0 {
			b.WriteString("\nEach example of this section starts with these files:\n\n```\n")
			writeFiles(&b, s.files)
			b.WriteString("```\n")
		}
		for _, c := range s.cases {
			fmt.Fprintf(&b, "\n**%s**\n", c.title)
			if c.prose != "" {
				fmt.Fprintf(&b, "\n%s\n", c.prose)
			}
			var shown []file
			for _, f := range c.files {
				if i := indexFile(s.files, f.name); i >= 0 {
					if bytes.Equal(s.files[i].data, f.data) {
						continue
					}
					if d, ok := change(f.name, s.files[i].data, f.data); ok {
						fmt.Fprintf(&b, "\n%s\n", d)
						continue
					}
				}
				shown = append(shown, f)
			}
			b.WriteString("\n```\n")
			for _, line := range c.lines {
				fmt.Fprintf(&b, "$ promptloom %s\n", line)
			}
			writeFiles(&b, shown)
			fmt.Fprintf(&b, "== exit %d ==\n", c.exit)
			if c.output != "" {
				b.WriteString(c.output + "\n")
			}
			b.WriteString("```\n")
		}
	}
	b.WriteString(libraryIntro)
	pkg, heading := "\x00", ""
	for i, c := range cases {
		if c.pkg != pkg {
			pkg, heading = c.pkg, ""
			name := "promptloom"
			if pkg != "" {
				name = pkg
			}
			fmt.Fprintf(&b, "\n### `%s`\n", name)
			if slices.ContainsFunc(cases, func(o *libCase) bool { return o.pkg == pkg && o.postgres != "" }) {
				b.WriteString("\n" + wrap("The examples that need a PostgreSQL server show their messages as recorded against one; the tests compare them with a live run's when `PROMPTLOOM_TEST_POSTGRES` is set.", 76) + "\n")
			}
		}
		// The heading leads the case's prose, or stands alone above the
		// cases that share it.
		doc := c.doc
		if h := c.heading(); h != heading {
			heading = h
			if i+1 < len(cases) && cases[i+1].pkg == pkg && cases[i+1].heading() == h {
				fmt.Fprintf(&b, "\n%s\n", h)
			} else {
				doc = h + ": " + doc
			}
		}
		fmt.Fprintf(&b, "\n%s\n", wrap(doc, 76))
		if c.message != "" {
			fmt.Fprintf(&b, "\n```\n%s\n```\n", c.message)
		}
	}
	return b.Bytes()
}

// wrap breaks text into lines of at most width bytes at spaces, as the
// page's other prose is written (a longer word stands on its own line).
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(text) {
		switch {
		case i == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

func indexFile(files []file, name string) int {
	for i, f := range files {
		if f.name == name {
			return i
		}
	}
	return -1
}

// writeFiles writes files as a txtar archive does, quoting content that
// is not UTF-8.
func writeFiles(b *bytes.Buffer, files []file) {
	for _, f := range files {
		if f.quoted {
			fmt.Fprintf(b, "-- %s (quoted) --\n%s\n", f.name, fmt.Sprintf("%+q", f.data))
			continue
		}
		fmt.Fprintf(b, "-- %s --\n", f.name)
		if len(f.data) > 0 {
			fmt.Fprintf(b, "%s\n", f.data)
		}
	}
}

// change says how new differs from old in a sentence, when they differ in
// one short span on one line ("In m.json, the second `X` is `Y`."), and
// false when showing new whole says it better. The span is widened to
// whole JSON members (to the commas and brackets around it) and named by
// its occurrence in old, so the sentence gives new exactly.
func change(name string, old, new []byte) (string, bool) {
	if len(old) < 160 || !utf8.Valid(old) || !utf8.Valid(new) {
		return "", false
	}
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	s := 0
	for s < len(old)-p && s < len(new)-p && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	o0, o1, n0, n1 := p, len(old)-s, p, len(new)-s
	for o0 > 0 && !strings.ContainsRune(",{[\n", rune(old[o0-1])) {
		o0, n0 = o0-1, n0-1
	}
	for o1 < len(old) && !strings.ContainsRune(",}]\n", rune(old[o1])) {
		o1, n1 = o1+1, n1+1
	}
	x, y := string(old[o0:o1]), string(new[n0:n1])
	if x == "" || len(x)+len(y) > len(new)/2 || strings.ContainsAny(x+y, "\n`") {
		return "", false
	}
	n, k := 0, 0
	for i := 0; i+len(x) <= len(old); i++ {
		if string(old[i:i+len(x)]) == x {
			if n++; i == o0 {
				k = n
			}
		}
	}
	if k == 0 || string(old[:o0])+y+string(old[o1:]) != string(new) {
		return "", false // cannot happen: the sentence would not give new
	}
	which := "`" + x + "`"
	if n > 1 {
		which = "the " + ordinal(k) + " " + which
	}
	var d string
	switch {
	case strings.HasPrefix(y, x):
		d = fmt.Sprintf("In %s, %s is followed by `%s`.", name, which, y[len(x):])
	case strings.HasSuffix(y, x):
		d = fmt.Sprintf("In %s, %s is preceded by `%s`.", name, which, y[:len(y)-len(x)])
	default:
		d = fmt.Sprintf("In %s, %s is `%s`.", name, which, y)
	}
	if y == "" {
		d = fmt.Sprintf("In %s, %s is removed.", name, which)
	}
	return d, true
}

func ordinal(k int) string {
	if k >= 1 && k <= 10 {
		return [...]string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}[k-1]
	}
	return fmt.Sprintf("occurrence %d of", k)
}

// heading names what a library case's error matches.
func (c *libCase) heading() string {
	switch {
	case c.isName != "" && c.asName != "":
		return fmt.Sprintf("**`%s`**, a `%s`", c.isName, c.asName)
	case c.isName != "":
		return fmt.Sprintf("**`%s`**", c.isName)
	}
	return fmt.Sprintf("**`%s`**", c.asName)
}

// name names a library case in messages: what it matches.
func (c *libCase) name() string {
	return strings.Trim(c.isName+" "+c.asName, " ")
}
