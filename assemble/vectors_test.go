package assemble

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	pjson "github.com/promptloom/promptloom/internal/json"
)

var update = flag.Bool("update", false, "write the vectors' expected files and testdata/session.json from the code")

// The conformance vectors: each directory under testdata/vectors holds an
// input (the file form), and either the body and manifest Assemble makes
// of it (body.json, manifest.json) or the error it gives (error.txt).
// They were produced by the code and reviewed; another implementation
// can hold itself to them.
func TestVectors(t *testing.T) {
	dirs, err := filepath.Glob("testdata/vectors/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, "input.json"))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{}
			c, err := Read(in)
			var r *result
			if err == nil {
				r, err = assembled(c, nil)
			}
			if err != nil {
				got["error.txt"] = []byte(err.Error() + "\n")
			} else {
				var body bytes.Buffer
				if err := json.Indent(&body, r.Body, "", "  "); err != nil {
					t.Fatal(err)
				}
				got["body.json"] = append(body.Bytes(), '\n')
				m, err := json.MarshalIndent(r.Manifest, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got["manifest.json"] = append(m, '\n')
				// The body is exactly the indented file's compact form.
				if want, err := os.ReadFile(filepath.Join(dir, "body.json")); err == nil {
					compact, err := pjson.Encode(want)
					canon, err2 := pjson.Encode(r.Body)
					if err != nil || err2 != nil || !bytes.Equal(compact, canon) {
						t.Errorf("body differs from body.json as canonical JSON")
					}
				}
			}
			if *update {
				for _, name := range []string{"error.txt", "body.json", "manifest.json"} {
					if got[name] == nil {
						os.Remove(filepath.Join(dir, name))
					}
				}
			}
			for name, b := range got {
				path := filepath.Join(dir, name)
				if *update {
					if err := os.WriteFile(path, b, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -update to write it)", err)
				}
				if !bytes.Equal(want, b) {
					t.Errorf("%s differs from the code's:\n%s", name, b)
				}
			}
		})
	}
}

// testdata/session.json is the generator's 200-turn session, byte for
// byte, so that the CLI and other implementations can run the session
// the tests measure.
func TestSessionFile(t *testing.T) {
	want := fileOf(t, genSession(200, 200, 30000, 1))
	if *update {
		if err := os.WriteFile("testdata/session.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("testdata/session.json")
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("testdata/session.json is not the generator's (go test -update): %v", err)
	}
}
