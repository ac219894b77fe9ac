package project_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/promptloom/promptloom/project"
)

func ExampleDetect() {
	dir, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/tool\n"), 0o644)

	// Only the presence of a credential variable counts, never its value.
	has := func(name string) bool { return name == "GITHUB_TOKEN" }
	p, err := project.Detect(dir, has)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Caps)
	for _, f := range p.Fragments {
		fmt.Println(f.ID, f.RequiresCaps)
	}
	// Output:
	// [credential.github language.go]
	// profile:go [language.go]
	// profile:cred:GITHUB_TOKEN [credential.github]
}
