package errdoc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/promptloom/promptloom/cmd/promptloom/internal/cli"
)

// A section is one directory of the command line's catalogue: a heading,
// its prose, the files every case of it starts with, and its cases.
type section struct {
	dir     string
	heading string
	prose   string
	files   []file
	cases   []*cliCase
}

// A cliCase is one run of the command line: its title and prose, its own
// files (beside, or instead of, its section's) and its commands.
type cliCase struct {
	path     string // relative to the catalogue, for messages
	title    string
	prose    string
	commands [][]string
	lines    []string // the commands as written
	files    []file

	// What running it gave: the last command's exit code, and its
	// stdout then its stderr.
	exit   int
	output string
}

// A file of a case or section. Quoted content is held by the archive as a
// Go string literal, for bytes that are not UTF-8.
type file struct {
	name   string
	data   []byte
	quoted bool
}

// readCLI reads the command line's catalogue: each directory of dir is a
// section, its section.txtar the heading, prose and shared files, every
// other .txtar file a case, in the order of their names.
func readCLI(dir string) ([]*section, error) {
	dirs, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var sections []*section
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		s, err := readSection(dir, d.Name())
		if err != nil {
			return nil, err
		}
		sections = append(sections, s)
	}
	if len(sections) == 0 {
		return nil, fmt.Errorf("%s: no sections", dir)
	}
	return sections, nil
}

func readSection(root, dir string) (*section, error) {
	s := &section{dir: dir}
	comment, files, err := readArchive(filepath.Join(root, dir, "section.txtar"))
	if err != nil {
		return nil, err
	}
	s.heading, s.prose, _ = strings.Cut(comment, "\n")
	s.prose = strings.TrimSpace(s.prose)
	s.files = files
	if s.heading == "" {
		return nil, fmt.Errorf("%s/section.txtar: no heading on its first line", dir)
	}
	names, err := filepath.Glob(filepath.Join(root, dir, "*.txtar"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	for _, name := range names {
		if filepath.Base(name) == "section.txtar" {
			continue
		}
		c, err := readCase(name)
		if err != nil {
			return nil, err
		}
		c.path = dir + "/" + filepath.Base(name)
		s.cases = append(s.cases, c)
	}
	if len(s.cases) == 0 {
		return nil, fmt.Errorf("%s: no cases", dir)
	}
	return s, nil
}

// readCase reads one case: its comment is a title on the first line, then
// any paragraphs of prose, then the commands, each a line
// "$ promptloom ARGS" (arguments are split as Args splits them).
func readCase(path string) (*cliCase, error) {
	comment, files, err := readArchive(path)
	if err != nil {
		return nil, err
	}
	c := &cliCase{files: files}
	title, rest, _ := strings.Cut(comment, "\n")
	c.title = strings.TrimSpace(title)
	if c.title == "" {
		return nil, fmt.Errorf("%s: no title on its first line", path)
	}
	var prose []string
	for _, l := range strings.Split(rest, "\n") {
		if args, ok := strings.CutPrefix(l, "$ promptloom "); ok {
			c.commands, c.lines = append(c.commands, Args(args)), append(c.lines, args)
		} else if len(c.commands) == 0 {
			prose = append(prose, l)
		} else if strings.TrimSpace(l) != "" {
			return nil, fmt.Errorf("%s: %q follows the commands: prose goes before them", path, l)
		}
	}
	c.prose = strings.TrimSpace(strings.Join(prose, "\n"))
	if len(c.commands) == 0 {
		return nil, fmt.Errorf("%s: no $ promptloom command", path)
	}
	return c, nil
}

// readArchive reads a txtar archive: a comment, then files, each after a
// line "-- NAME --". A file's content is its lines without the last
// newline, so a file need not end in one (a blank last line gives one). A
// file named "NAME (quoted)" holds NAME's content as a Go string literal.
func readArchive(path string) (comment string, files []file, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var cur *file
	var body []string
	flush := func() error {
		if cur == nil {
			comment = strings.Join(body, "\n")
			return nil
		}
		text := strings.Join(body, "\n")
		if cur.quoted {
			if text, err = strconv.Unquote(text); err != nil {
				return fmt.Errorf("%s: %s: %v", path, cur.name, err)
			}
		}
		cur.data = []byte(text)
		files = append(files, *cur)
		return nil
	}
	for _, l := range lines {
		name, isMarker := strings.CutPrefix(l, "-- ")
		name, hasEnd := strings.CutSuffix(name, " --")
		if !isMarker || !hasEnd || strings.TrimSpace(name) == "" {
			body = append(body, l)
			continue
		}
		if err := flush(); err != nil {
			return "", nil, err
		}
		name, quoted := strings.CutSuffix(strings.TrimSpace(name), " (quoted)")
		cur, body = &file{name: name, quoted: quoted}, nil
	}
	if err := flush(); err != nil {
		return "", nil, err
	}
	for _, f := range files {
		if !f.quoted && !utf8.Valid(f.data) {
			return "", nil, fmt.Errorf("%s: %s is not UTF-8: name it %q and give a Go string literal", path, f.name, f.name+" (quoted)")
		}
	}
	return comment, files, nil
}

// run runs c in the working directory, which is empty: the section's
// files and then the case's are written, and the commands run in order
// through cli.Main with an empty stdin.
func (s *section) run(c *cliCase) error {
	for _, f := range append(slices.Clone(s.files), c.files...) {
		if err := os.WriteFile(f.name, f.data, 0o644); err != nil {
			return err
		}
	}
	for _, args := range c.commands {
		var stdout, stderr bytes.Buffer
		c.exit = cli.Main(args, strings.NewReader(""), &stdout, &stderr)
		stdout.Write(stderr.Bytes())
		c.output = strings.TrimRight(stdout.String(), "\n")
	}
	return nil
}
