package cli

import (
	"errors"
	"flag"
	"os"
	"path/filepath"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/template"
)

func init() {
	register("render", "render [--string TEMPLATE] [--bindings FILE] [--max-bytes N] [TEMPLATE_FILE]", runRender)
}

// runRender renders a template in Harn's language and prints the text byte
// for byte (nothing added), exit 0. A file's includes are read from its
// directory, which they may not leave; an inline template's from the
// working directory. A parse or render error is Harn's message and
// position, exit 2.
func runRender(e *env, args []string) int {
	fs := newFlags("render")
	inline := fs.String("string", "", "render this template text instead of a file")
	bindingsFile := fs.String("bindings", "", "a JSON object of bindings (a file, or - for stdin)")
	maxBytes := fs.Int("max-bytes", promptloom.DefaultMaxBytes, "refuse a template, include, bindings or output larger than N bytes")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return e.flagError(fs, "render", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *maxBytes < 1 {
		return e.fail("render: --max-bytes must be at least 1, got %d", *maxBytes)
	}
	if set["string"] == (len(pos) == 1) || len(pos) > 1 {
		return e.fail("render: takes one TEMPLATE_FILE or --string TEMPLATE")
	}
	name, dir, src := "", ".", []byte(*inline)
	if !set["string"] {
		name, dir = pos[0], filepath.Dir(pos[0])
		if src, err = e.readLimited(name, int64(*maxBytes)); err != nil {
			return e.fail("render: %v", err)
		}
	}
	var bindings []byte
	if *bindingsFile != "" {
		if bindings, err = e.readLimited(*bindingsFile, int64(*maxBytes)); err != nil {
			return e.fail("render: %v", err)
		}
	}
	// An os.Root, unlike os.DirFS, follows no symbolic link out of the
	// directory: Harn, which canonicalizes, refuses those too.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return e.fail("render: %v", err)
	}
	defer root.Close()
	t, err := template.Parse(name, src, &template.Options{Root: root.FS(), MaxBytes: *maxBytes})
	if err == nil {
		var r *template.Result
		if r, err = t.Render(bindings); err == nil {
			if _, err := e.stdout.Write([]byte(r.Text)); err != nil {
				return e.fail("render: %v", err)
			}
			return ExitOK
		}
	}
	var te *template.Error
	if errors.As(err, &te) {
		return e.fail("%s", te)
	}
	return e.fail("render: %v", err)
}
