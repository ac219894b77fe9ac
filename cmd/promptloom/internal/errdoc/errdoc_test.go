package errdoc

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The archive format reads back what writeFiles writes, including files
// with no final newline, empty files and quoted bytes.
func TestArchiveRoundTrip(t *testing.T) {
	files := []file{
		{name: "a.txt", data: []byte("alpha\n\nomega")},
		{name: "empty", data: []byte("")},
		{name: "newline.jsonl", data: []byte("{}\n")},
		{name: "bytes", data: []byte("a\xffb"), quoted: true},
	}
	var b bytes.Buffer
	b.WriteString("A title\n\nSome prose.\n\n$ promptloom explain a.txt\n")
	writeFiles(&b, files)
	path := filepath.Join(t.TempDir(), "case.txtar")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := readCase(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.title != "A title" || c.prose != "Some prose." || len(c.commands) != 1 || strings.Join(c.commands[0], " ") != "explain a.txt" {
		t.Errorf("read title %q, prose %q, commands %q", c.title, c.prose, c.commands)
	}
	if len(c.files) != len(files) {
		t.Fatalf("read %d files, want %d", len(c.files), len(files))
	}
	for i, f := range c.files {
		if f.name != files[i].name || !bytes.Equal(f.data, files[i].data) || f.quoted != files[i].quoted {
			t.Errorf("file %d: read %q %q (quoted %v), want %q %q", i, f.name, f.data, f.quoted, files[i].name, files[i].data)
		}
	}
}

// change names one changed span so that the sentence gives the new file
// exactly, and declines when showing the file says it better.
func TestChange(t *testing.T) {
	base := `{"a":"x","segments":[{"bytes":5,"id":"s0"},{"bytes":5,"id":"s1"}],` + `"pad":"` + strings.Repeat("p", 120) + `"}`
	for _, tt := range []struct {
		new, want string
	}{
		{strings.Replace(base, `"a":"x"`, `"a":""`, 1), "In m.json, `\"a\":\"x\"` is `\"a\":\"\"`."},
		{strings.Replace(base, `"id":"s1"}`, `"id":"s1"},{"bytes":1,"id":"s2"}`, 1), "In m.json, `\"id\":\"s1\"}` is followed by `,{\"bytes\":1,\"id\":\"s2\"}`."},
		{strings.Replace(base, `{"bytes":5,"id":"s1"}`, `{"bytes":7,"id":"s1"}`, 1), "In m.json, the second `\"bytes\":5` is `\"bytes\":7`."},
		{`{}`, ""},
	} {
		got, ok := change("m.json", []byte(base), []byte(tt.new))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("change to %s:\ngot  %q, %v\nwant %q", tt.new, got, ok, tt.want)
		}
	}
}
