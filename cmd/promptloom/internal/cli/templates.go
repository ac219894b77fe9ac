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

// readSince reads explain --since's previous call: a manifest (its schema
// says so) or an options file, explained as the current one is (same
// --project, --budget, --max-bytes), whose manifest is then the previous
// call's.
func (e *env) readSince(path string, pl pipeline) (*manifest.Manifest, error) {
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
