package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/manifest"

	"github.com/tidwall/gjson"
)

// optionsDir is the directory of an options file ("-": the working
// directory), where its templated fragments' template_file, bindings files
// and includes are read. An os.Root, unlike os.DirFS, follows no symbolic
// link out of it. The caller closes it once the options are parsed.
func optionsDir(name string) (fs.FS, func()) {
	dir := "."
	if name != "-" {
		dir = filepath.Dir(name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, func() {} // a template that needs a file then says so
	}
	return root.FS(), func() { root.Close() }
}

// loadBindings reads --bindings into the pipeline's parse and explain
// options, once.
func (e *env) loadBindings(pl *pipeline) error {
	if pl.bindings == "" || pl.parse.Bindings != nil {
		return nil
	}
	b, err := e.readLimited(pl.bindings, pl.maxBytes)
	if err != nil {
		return fmt.Errorf("--bindings: %w", err)
	}
	if b == nil {
		b = []byte{}
	}
	pl.parse.Bindings, pl.explain.Bindings = b, b
	return nil
}

// readSince reads explain --since's previous call: a manifest (its schema
// says so); with --bindings, the previous call's bindings file, the
// current options explained with it; else the previous call's options
// file. Options are explained as the current ones are (same --project,
// --budget, --max-bytes), and the previous call's manifest is theirs.
func (e *env) readSince(path string, optionsPath string, pl pipeline) (*manifest.Manifest, error) {
	raw, err := e.readLimited(path, max(maxManifestBytes, pl.maxBytes))
	if err != nil {
		return nil, err
	}
	if gjson.GetBytes(raw, "schema").String() == manifestSchema {
		m, err := manifest.Read(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return m, nil
	}
	if pl.bindings != "" {
		pl.explain.Bindings = raw
		x, err := e.explainFile(optionsPath, pl)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return x.Manifest, nil
	}
	files, done := optionsDir(path)
	defer done()
	pl.explain.Files = files
	x, err := explain.Explain(raw, &pl.explain)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return x.Manifest, nil
}

// manifestSchema is the schema a manifest names.
const manifestSchema = "harn.llm.context_manifest.v1"
