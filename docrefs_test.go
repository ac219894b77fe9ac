package promptloom_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// pkgSymbols is what a package of the module declares: its exported
// top-level names, and for each of its types the exported methods and
// fields (open: a type that embeds another, or a method set promptloom
// cannot list, takes any).
type pkgSymbols struct {
	names   map[string]bool
	members map[string]map[string]bool
	open    map[string]bool
}

// moduleSymbols reads every non-main package of the module (internal
// ones too: comments name them), keyed by package name; packages that
// share a name are merged.
func moduleSymbols(t *testing.T) map[string]*pkgSymbols {
	t.Helper()
	out := map[string]*pkgSymbols{}
	fset := token.NewFileSet()
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
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(f.Name.Name, "_test")
		if name == "main" {
			return nil
		}
		isTest := strings.HasSuffix(p, "_test.go")
		if p == "doc.go" || filepath.Dir(p) == "." {
			name = "promptloom"
		}
		s := out[name]
		if s == nil {
			s = &pkgSymbols{names: map[string]bool{}, members: map[string]map[string]bool{}, open: map[string]bool{}}
			out[name] = s
		}
		member := func(typ, m string) {
			if s.members[typ] == nil {
				s.members[typ] = map[string]bool{}
			}
			s.members[typ][m] = true
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if isTest {
					// Of a test file, only the targets docs name (make fuzz).
					if d.Recv == nil && strings.HasPrefix(d.Name.Name, "Fuzz") {
						s.names[d.Name.Name] = true
					}
					continue
				}
				if d.Recv == nil {
					s.names[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				for {
					switch x := typ.(type) {
					case *ast.StarExpr:
						typ = x.X
						continue
					case *ast.IndexExpr:
						typ = x.X
						continue
					case *ast.IndexListExpr:
						typ = x.X
						continue
					}
					break
				}
				if id, ok := typ.(*ast.Ident); ok {
					member(id.Name, d.Name.Name)
				}
			case *ast.GenDecl:
				if isTest {
					continue
				}
				for _, spec := range d.Specs {
					switch sp := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							s.names[n.Name] = true
						}
					case *ast.TypeSpec:
						s.names[sp.Name.Name] = true
						switch tt := sp.Type.(type) {
						case *ast.StructType:
							for _, fl := range tt.Fields.List {
								if len(fl.Names) == 0 {
									s.open[sp.Name.Name] = true
								}
								for _, n := range fl.Names {
									member(sp.Name.Name, n.Name)
								}
							}
						case *ast.InterfaceType:
							for _, m := range tt.Methods.List {
								if len(m.Names) == 0 {
									s.open[sp.Name.Name] = true
								}
								for _, n := range m.Names {
									member(sp.Name.Name, n.Name)
								}
							}
						default:
							if sp.Assign.IsValid() {
								s.open[sp.Name.Name] = true // an alias
							}
							if _, ok := tt.(*ast.Ident); !ok {
								s.open[sp.Name.Name] = true
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ref is pkg.Name, or pkg.Type.Member, as docs and comments write them.
var ref = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)

// stdNames are module package names that are also standard packages or
// common identifiers, where a reference cannot be told apart.
var stdNames = map[string]bool{"json": true}

// unresolved lists the references in text to the module's packages that
// name nothing they declare. A name followed by "(now" or "(since" is
// history, told as such (docs/performance.md's measurements name what
// they measured).
func unresolved(syms map[string]*pkgSymbols, text string) []string {
	var bad []string
	for _, at := range ref.FindAllStringSubmatchIndex(text, -1) {
		sub := func(i int) string {
			if at[2*i] < 0 {
				return "" // no member
			}
			return text[at[2*i]:at[2*i+1]]
		}
		pkg, name, member := sub(1), sub(2), sub(3)
		after := strings.TrimLeft(text[at[1]:], "`*")
		if strings.HasPrefix(after, " (now ") || strings.HasPrefix(after, " (since ") {
			continue
		}
		s := syms[pkg]
		if s == nil || stdNames[pkg] {
			continue
		}
		switch {
		case !s.names[name]:
			bad = append(bad, pkg+"."+name)
		case member != "" && s.members[name] != nil && !s.open[name] && !s.members[name][member]:
			bad = append(bad, pkg+"."+name+"."+member)
		}
	}
	return bad
}

// Every pkg.Name (and pkg.Type.Member) that README.md, docs/*.md and the
// module's Go comments mention names something the package declares: a
// name cut or moved leaves no pointer to nothing behind.
func TestDocReferencesResolve(t *testing.T) {
	syms := moduleSymbols(t)
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, r := range unresolved(syms, line) {
				t.Errorf("%s:%d: %s names nothing", f, i+1, r)
			}
		}
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		if strings.Contains(p, "testdata") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for _, r := range unresolved(syms, c.Text) {
					t.Errorf("%s: %s names nothing", fset.Position(c.Pos()), r)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The check at work: names cut or moved are caught, with a type's
// members; names that exist, history and other packages' names pass.
func TestDocReferencesCatchStaleNames(t *testing.T) {
	syms := moduleSymbols(t)
	for text, want := range map[string][]string{
		"a verifier (journal.Options.Cosigners)":            {"journal.Options.Cosigners"},
		"`explain.New` then `manifest.ErrDuplicateKey`":     {"explain.New", "manifest.ErrDuplicateKey"},
		"transcript.Options.Cosigners, explain.FromOptions": nil,
		"`request.New` (now `request.FromPayload`)":         nil,
		"http.NewRequest and json.Marshal":                  nil,
	} {
		if got := unresolved(syms, text); !slices.Equal(got, want) {
			t.Errorf("unresolved(%q) = %q, want %q", text, got, want)
		}
	}
}
