package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records what the rules call, in order.
type recorder struct {
	testing.TB
	calls []string
}

func (r *recorder) Helper() {}
func (r *recorder) Logf(f string, a ...any) {
	r.calls = append(r.calls, "log: "+fmt.Sprintf(f, a...))
}
func (r *recorder) Errorf(f string, a ...any) {
	r.calls = append(r.calls, "error: "+fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) {
	r.calls = append(r.calls, "fatal: "+fmt.Sprintf(f, a...))
}
func (r *recorder) Skipf(f string, a ...any) {
	r.calls = append(r.calls, "skip: "+fmt.Sprintf(f, a...))
}

// An npm folder that is not installed skips, or fails under
// BENCHSERVE_PARITY=1, saying how to install it; Present logs, or fails
// without stopping the test.
func TestNPMMissing(t *testing.T) {
	missing := NPM{Dir: "tools/nosuch", What: "the test files", root: t.TempDir()}
	const (
		skip = "skip: the test files are not installed (no tools/nosuch/node_modules/.package-lock.json): run `npm ci --prefix tools/nosuch` from the repository root (CI sets BENCHSERVE_PARITY=1, which makes this a failure)"
		fail = "the test files are not installed (no tools/nosuch/node_modules/.package-lock.json): run `npm ci --prefix tools/nosuch` from the repository root; BENCHSERVE_PARITY=1 makes this a failure, not a skip"
	)
	for _, tt := range []struct {
		parity           string
		modules, present string // the first call of each
	}{
		{"", skip, "log: not using the test files: they are not installed"},
		{"0", "skip: ", "log: "},
		{"1", "fatal: " + fail, "error: " + fail},
		{"yes", `fatal: BENCHSERVE_PARITY="yes": want 1 or 0`, `fatal: BENCHSERVE_PARITY="yes": want 1 or 0`},
	} {
		t.Setenv(ParityVar, tt.parity)
		r := &recorder{TB: t}
		missing.Modules(r)
		if len(r.calls) == 0 || !strings.HasPrefix(r.calls[0], tt.modules) {
			t.Errorf("BENCHSERVE_PARITY=%q: Modules %q, want first %q", tt.parity, r.calls, tt.modules)
		}
		r = &recorder{TB: t}
		if _, ok := missing.Present(r); ok || len(r.calls) == 0 || !strings.HasPrefix(r.calls[0], tt.present) {
			t.Errorf("BENCHSERVE_PARITY=%q: Present %v %q, want first %q", tt.parity, ok, r.calls, tt.present)
		}
	}
}

// An installed folder is found; a file missing under it is a failure,
// whatever BENCHSERVE_PARITY says.
func TestNPMInstalled(t *testing.T) {
	root := t.TempDir()
	modules := filepath.Join(root, "tools", "x", "node_modules")
	if err := os.MkdirAll(modules, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(modules, ".package-lock.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := NPM{Dir: "tools/x", What: "the test files", root: root}
	r := &recorder{TB: t}
	if got := n.Modules(r); got != modules || len(r.calls) != 0 {
		t.Errorf("Modules = %q (%q), want %q", got, r.calls, modules)
	}
	if got, ok := n.Present(r); got != modules || !ok || len(r.calls) != 0 {
		t.Errorf("Present = %q %v (%q), want %q", got, ok, r.calls, modules)
	}
	n.File(r, "a/b.json")
	if len(r.calls) != 1 || !strings.HasPrefix(r.calls[0], "fatal: ") || !strings.Contains(r.calls[0], "installed but incomplete or stale") {
		t.Errorf("a missing file: %q, want a failure", r.calls)
	}
}

// Tests find the repository root from their package's folder.
func TestRepoRoot(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testenv", "testenv.go")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
}

// The probe's answer, for the log: whether this kernel stamps, and why not.
func TestKernelStamps(t *testing.T) {
	ok, why := kernelStamps()
	t.Logf("kernel receive times: %v %s", ok, why)
	t.Setenv(KernelStampsVar, "1")
	r := &recorder{TB: t}
	NeedKernelStamps(r)
	if ok != (len(r.calls) == 0) || !ok && !strings.HasPrefix(r.calls[0], "fatal: ") {
		t.Errorf("under BENCHSERVE_KERNEL_STAMPS=1, stamps %v: %q", ok, r.calls)
	}
	t.Setenv(KernelStampsVar, "")
	r = &recorder{TB: t}
	NeedKernelStamps(r)
	if ok != (len(r.calls) == 0) || !ok && !strings.HasPrefix(r.calls[0], "skip: ") {
		t.Errorf("stamps %v: %q", ok, r.calls)
	}
}

// The slow tier runs under BENCHSERVE_SLOW=1 only; otherwise it skips,
// saying how to run it; a value that is not a boolean fails.
func TestSlow(t *testing.T) {
	if testing.Short() {
		t.Skip("Slow skips everything under -short")
	}
	for _, tt := range []struct{ v, want string }{
		{"", "skip: slow tier (real time): set BENCHSERVE_SLOW=1 to run it, as .ci/run does"},
		{"0", "skip: slow tier (real time): set BENCHSERVE_SLOW=1 to run it, as .ci/run does"},
		{"1", ""},
		{"yes", `fatal: BENCHSERVE_SLOW="yes": want 1 or 0`},
	} {
		t.Setenv(SlowVar, tt.v)
		r := &recorder{TB: t}
		Slow(r)
		if got := strings.Join(r.calls, "\n"); !strings.HasPrefix(got, tt.want) || (tt.want == "" && got != "") {
			t.Errorf("%s=%q: %q, want %q", SlowVar, tt.v, got, tt.want)
		}
	}
}
