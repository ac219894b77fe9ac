package pgtest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// Cluster is a PostgreSQL server of a test's own, for tests that crash the
// server: started from Debian's binaries in a temporary directory, run as the
// postgres user, on a free port on 127.0.0.1.
type Cluster struct {
	// URL is the cluster's postgres database.
	URL  string
	t    testing.TB
	bin  string
	dir  string
	port int
}

// NewCluster starts a cluster, stopped and deleted when the test ends. Like
// every test that needs PostgreSQL it skips when Env is unset (it does not
// use that server, only the same installation); it also skips when the
// PostgreSQL binaries are missing or the test can neither run them as the
// postgres user nor is that user.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(Env) == "" {
		t.Skipf("set %s to run the tests that need PostgreSQL", Env)
	}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Skip("no PostgreSQL binaries in /usr/lib/postgresql (apt-get install postgresql)")
	}
	// The newest major version, compared as numbers (9 before 15), as
	// .ci/postgres.sh's sort -V picks it.
	slices.SortFunc(bins, func(a, b string) int { return cmp.Compare(majorOf(a), majorOf(b)) })
	me, err := user.Current()
	if err != nil || (me.Uid != "0" && me.Username != "postgres") {
		t.Skip("starting a private PostgreSQL cluster needs root or the postgres user")
	}
	c := &Cluster{t: t, bin: filepath.Dir(bins[len(bins)-1])}
	c.dir, err = os.MkdirTemp("", "promptloom-pgcrash.")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(c.dir, 0o755)
	if me.Uid == "0" {
		if out, err := exec.Command("chown", "postgres:", c.dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	t.Cleanup(func() {
		c.Crash()
		c.as("rm", "-rf", c.dir).Run()
	})
	if out, err := c.as(c.bin+"/initdb", "-D", c.dir+"/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	for range 10 {
		c.port = 20000 + rand.IntN(40000)
		if c.start() == nil {
			c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
			return c
		}
	}
	t.Fatal("could not start a PostgreSQL cluster")
	return nil
}

func (c *Cluster) as(name string, args ...string) *exec.Cmd {
	if me, _ := user.Current(); me != nil && me.Username == "postgres" {
		return exec.Command(name, args...)
	}
	return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
}

func (c *Cluster) start() error {
	return c.as(c.bin+"/pg_ctl", "-D", c.dir+"/data", "-l", c.dir+"/log", "-w", "-t", "60",
		"-o", fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s", c.port, c.dir), "start").Run()
}

// Crash stops the server as a crash would: immediate shutdown, no
// checkpoint, WAL not yet written is lost; the next start recovers.
func (c *Cluster) Crash() {
	c.as(c.bin+"/pg_ctl", "-D", c.dir+"/data", "-m", "immediate", "stop").Run()
}

// Start starts the server again on the same port, after a Crash.
func (c *Cluster) Start() {
	c.t.Helper()
	if err := c.start(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("restart: %v\n%s", err, log)
	}
}

// majorOf is the major version in /usr/lib/postgresql/MAJOR/bin/initdb.
func majorOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}
