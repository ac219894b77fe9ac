package options

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docSections says which section of docs/options.md documents the keys
// read by each parser function (or listed in each key table). A function
// that reads keys and is not here fails TestOptionsDoc: say where its keys
// are documented.
var docSections = map[string][]string{
	"Parse":             {"Top-level keys"},
	"parseSystemItem":   {"`system` items"},
	"parseReplacement":  {"The replacement root"},
	"parsePrimaryParts": {"`_system_fragments` items"},
	"partKeys":          {"`_system_fragments` items"},
	"readPart":          {"`_system_fragments` items", "`context_profile`"},
	"profileKeys":       {"`context_profile`"},
	"parseProfile":      {"`context_profile`"},
	"parseTools":        {"`tools`"},
	"parseReminder":     {"`reminders`"},
	"removedOptions":    {"Removed keys"},
	"templateKeys":      {"`system` items", "`_system_fragments` items", "`context_profile`", "Templated fragments"},
}

// parserKeys returns, for each function or key table of the parser's
// source, the JSON keys it reads: the string literals given to get,
// firstUnknown and gateList, the cases of a switch on a variable named key,
// and the entries of the key tables (partKeys, profileKeys, the keys of
// removedOptions). It reads the source rather than a list kept beside it,
// so a key added to the parser is a key this test knows.
func parserKeys(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					vs, ok := spec.(*ast.ValueSpec)
					if !ok || len(vs.Values) != 1 {
						continue
					}
					cl, ok := vs.Values[0].(*ast.CompositeLit)
					if !ok {
						continue
					}
					table := vs.Names[0].Name
					if _, wanted := docSections[table]; !wanted {
						continue
					}
					for _, el := range cl.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							el = kv.Key
						}
						if s, ok := lit(el); ok {
							out[table] = append(out[table], s)
						}
					}
				}
			case *ast.FuncDecl:
				fn := d.Name.Name
				ast.Inspect(d, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						var callee string
						switch f := n.Fun.(type) {
						case *ast.Ident:
							callee = f.Name
						case *ast.SelectorExpr:
							callee = f.Sel.Name
						}
						args := n.Args
						switch callee {
						case "get", "firstUnknown":
						case "gateList":
							args = args[len(args)-1:]
						default:
							return true
						}
						for _, a := range args {
							if s, ok := lit(a); ok {
								out[fn] = append(out[fn], s)
							}
						}
					case *ast.SwitchStmt:
						if id, ok := n.Tag.(*ast.Ident); !ok || id.Name != "key" {
							return true
						}
						for _, st := range n.Body.List {
							for _, e := range st.(*ast.CaseClause).List {
								if s, ok := lit(e); ok {
									out[fn] = append(out[fn], s)
								}
							}
						}
					}
					return true
				})
			}
		}
	}
	return out
}

// docSectionsOf splits docs/options.md at its "## " headings.
func docSectionsOf(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/options.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	parts := regexp.MustCompile(`(?m)^## `).Split(string(doc), -1)
	for _, p := range parts[1:] {
		title, body, _ := strings.Cut(p, "\n")
		out[strings.TrimSpace(title)] = body
	}
	return out
}

// TestOptionsDoc: every key the parser reads is documented, as `key`, in
// the section of docs/options.md about the object it belongs to.
func TestOptionsDoc(t *testing.T) {
	keys := parserKeys(t)
	sections := docSectionsOf(t)
	total := 0
	for fn, ks := range keys {
		secs, ok := docSections[fn]
		if !ok {
			t.Errorf("%s reads keys %q: add it to docSections and document its keys in docs/options.md", fn, ks)
			continue
		}
		for _, sec := range secs {
			body, ok := sections[sec]
			if !ok {
				t.Errorf("docs/options.md has no section %q", sec)
				continue
			}
			for _, k := range ks {
				total++
				if !strings.Contains(body, "`"+k+"`") {
					t.Errorf("key %q (read by %s) is not documented in section %q of docs/options.md", k, fn, sec)
				}
			}
		}
	}
	// The extraction itself must find what it is meant to find; a refactor
	// that hid the keys from it would otherwise pass vacuously.
	for fn, want := range map[string]string{
		"Parse": "actor_chain", "parseSystemItem": "position", "parseReminder": "ttl_turns",
		"readPart": "requires_caps", "parseTools": "guidance", "removedOptions": "caps",
	} {
		found := false
		for _, k := range keys[fn] {
			found = found || k == want
		}
		if !found {
			t.Errorf("extraction found no %q in %s (found %q)", want, fn, keys[fn])
		}
	}
	if total < 60 {
		t.Errorf("only %d keys extracted", total)
	}
}
