// Package project reads a project directory's signals into capabilities and
// capability-gated profile fragments: the context profile a harness would
// otherwise write by hand.
//
// It looks at go.mod, Cargo.toml, package.json (and tsconfig.json),
// pyproject.toml, the git remotes in .git/config, and the names of
// credential variables in the environment. Only names: the value of a
// credential is never read into anything promptloom keeps, and a remote URL
// is reduced to its host and owner/repo, so a token in it goes nowhere.
package project

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/promptloom/promptloom"
	pjson "github.com/promptloom/promptloom/internal/json"

	"github.com/tidwall/gjson"
)

// Profile is what a project's signals say: the capabilities a harness
// would otherwise set by hand, and the fragments that tell the model about
// them.
type Profile struct {
	// Caps are the capabilities the signals set, sorted.
	Caps []string `json:"caps"`
	// Fragments are the profile's prompt fragments, each gated on the
	// capability it describes; the id names the signal (profile:go,
	// profile:cred:GITHUB_TOKEN).
	Fragments []promptloom.Fragment `json:"-"`
}

// ErrNotADirectory is Detect's error for a path that is not a directory:
// a file there is no project to read.
var ErrNotADirectory = errors.New("project path is not a directory")

// maxFileBytes bounds what is read of each signal file.
const maxFileBytes = 1 << 20

// credentials maps environment variable names to capabilities. Only the
// presence of the name is looked at.
var credentials = []struct{ env, cap, what string }{
	{"GITHUB_TOKEN", "credential.github", "a GitHub token"},
	{"GH_TOKEN", "credential.github", "a GitHub token"},
	{"GITLAB_TOKEN", "credential.gitlab", "a GitLab token"},
	{"OPENAI_API_KEY", "credential.openai", "an OpenAI API key"},
	{"ANTHROPIC_API_KEY", "credential.anthropic", "an Anthropic API key"},
	{"AWS_ACCESS_KEY_ID", "credential.aws", "AWS credentials"},
	{"NPM_TOKEN", "credential.npm", "an npm token"},
	{"HF_TOKEN", "credential.huggingface", "a Hugging Face token"},
}

// envHas reports whether an environment variable is set. Its value is
// looked up by the runtime and dropped here: it never leaves this function.
func envHas(name string) bool {
	_, ok := os.LookupEnv(name)
	return ok
}

// Detect reads dir's signals. has reports whether an environment variable
// is set (nil: the process environment; a fake in tests); only names are
// ever looked at.
func Detect(dir string, has func(name string) bool) (*Profile, error) {
	if has == nil {
		has = envHas
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("project: %w: %s", ErrNotADirectory, dir)
	}
	p := &Profile{}
	d := detector{dir: dir, p: p}
	d.goModule()
	d.rustCrate()
	d.nodePackage()
	d.pythonProject()
	d.git()
	seen := map[string]bool{}
	for _, c := range credentials {
		if has(c.env) && !seen[c.env] {
			seen[c.env] = true
			d.add(c.cap, "cred:"+c.env,
				fmt.Sprintf("%s is available to tools as $%s: use it through the tools that need it (gh, git, the SDK), never print, echo or log it.",
					capitalize(c.what), c.env))
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	slices.Sort(p.Caps)
	p.Caps = slices.Compact(p.Caps)
	return p, nil
}

type detector struct {
	dir string
	p   *Profile
	err error
}

// add records a capability and a fragment gated on it.
func (d *detector) add(cap, id, body string) {
	d.p.Caps = append(d.p.Caps, cap)
	if body != "" {
		d.p.Fragments = append(d.p.Fragments, promptloom.Fragment{
			ID: "profile:" + id, Source: "project", Body: body, RequiresCaps: []string{cap},
		})
	}
}

// read returns the first maxFileBytes of dir's file name, or nil when it
// does not exist or is not a regular file (readRegular).
func (d *detector) read(name string) []byte {
	return d.readAt(filepath.Join(d.dir, name), name)
}

// readAt is read of any path; name is what an error calls it.
func (d *detector) readAt(path, name string) []byte {
	b, err := readRegular(path)
	if err != nil && d.err == nil {
		d.err = fmt.Errorf("project: %s: %w", name, err)
	}
	return b
}

// safeName keeps a name taken from a file only if it looks like one: a
// module path or package name, nothing that could smuggle text into the
// prompt.
var safeName = regexp.MustCompile(`^[A-Za-z0-9@][A-Za-z0-9._/@+-]{0,199}$`)

// quoted is " (`name`)" for a safe name, "" for any other.
func quoted(name string) string {
	if safeName.MatchString(name) {
		return " (`" + name + "`)"
	}
	return ""
}

func (d *detector) goModule() {
	b := d.read("go.mod")
	if b == nil {
		return
	}
	module := ""
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			module = strings.Trim(f[1], `"`)
			break
		}
	}
	d.add("language.go", "go", "This project is a Go module"+quoted(module)+
		": build with `go build ./...` and run `go test ./...` before you report success.")
}

func (d *detector) rustCrate() {
	b := d.read("Cargo.toml")
	if b == nil {
		return
	}
	name := tomlValue(b, "package", "name")
	d.add("language.rust", "rust", "This project is a Rust crate"+quoted(name)+
		": build with `cargo build` and run `cargo test` before you report success.")
}

func (d *detector) nodePackage() {
	b := d.read("package.json")
	if b == nil {
		return
	}
	// npm reads the last of two equal keys and gjson the first: a
	// package.json that is not JSON, or repeats a key, names nothing.
	pkg := gjson.ParseBytes(b)
	if _, err := pjson.Encode(b); err != nil {
		pkg = gjson.Result{}
	}
	name := pkg.Get("name").String()
	ts := d.read("tsconfig.json") != nil || pkg.Get("dependencies.typescript").Exists() ||
		pkg.Get("devDependencies.typescript").Exists()
	if ts {
		d.add("language.typescript", "typescript", "This project is a TypeScript package"+quoted(name)+
			": type-check with `npx tsc --noEmit` and run `npm test` before you report success.")
		return
	}
	d.add("language.javascript", "javascript", "This project is a JavaScript package"+quoted(name)+
		": run `npm test` before you report success.")
}

func (d *detector) pythonProject() {
	b := d.read("pyproject.toml")
	if b == nil {
		return
	}
	name := tomlValue(b, "project", "name")
	if name == "" {
		name = tomlValue(b, "tool.poetry", "name")
	}
	d.add("language.python", "python", "This project is a Python project"+quoted(name)+
		": run its tests with `python -m pytest` before you report success.")
}

// git reads the repository's config (.git/config, or through a .git file's
// gitdir in a worktree or submodule): a repository, and the forge of its
// remotes. Only the host and owner/repo of a remote URL are kept.
func (d *detector) git() {
	b, isGit := d.gitConfig()
	if !isGit {
		return
	}
	d.add("vcs.git", "git", "The project is a git repository: commit with a one-line summary and a body that says why.")
	forges := map[string]bool{}
	for _, url := range gitRemoteURLs(b) {
		host, repo := remoteHostRepo(url)
		var cap, id, forge string
		switch host {
		case "github.com":
			cap, id, forge = "forge.github", "github", "GitHub"
		case "gitlab.com":
			cap, id, forge = "forge.gitlab", "gitlab", "GitLab"
		default:
			continue
		}
		if forges[cap] {
			continue
		}
		forges[cap] = true
		d.add(cap, id, "Its remote is on "+forge+quoted(repo)+": refer to issues and pull requests by number.")
	}
}

// gitRemoteURLs returns the url values of [remote ...] sections.
func gitRemoteURLs(config []byte) []string {
	var out []string
	inRemote := false
	sc := bufio.NewScanner(bytes.NewReader(config))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inRemote = strings.HasPrefix(line, "[remote ")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); inRemote && ok && strings.TrimSpace(k) == "url" {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// remoteHostRepo reduces a remote URL to its host and owner/repo, dropping
// any userinfo (a token in https://user:token@host/... goes nowhere).
func remoteHostRepo(url string) (host, repo string) {
	rest := url
	if _, after, ok := strings.Cut(url, "://"); ok {
		rest = after
		if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
			rest = rest[at+1:]
		}
		host, repo, _ = strings.Cut(rest, "/")
	} else if at := strings.Index(rest, "@"); at >= 0 { // git@github.com:owner/repo.git
		host, repo, _ = strings.Cut(rest[at+1:], ":")
	}
	host = strings.ToLower(strings.Split(host, ":")[0])
	return host, strings.TrimSuffix(strings.Trim(repo, "/"), ".git")
}

// tomlValue finds key = "value" in [section] of a TOML file (enough for a
// package name; no TOML library is needed for one string).
func tomlValue(b []byte, section, key string) string {
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			in = line == "["+section+"]"
			continue
		}
		if k, v, ok := strings.Cut(line, "="); in && ok && strings.TrimSpace(k) == key {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
