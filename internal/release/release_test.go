package release

import (
	"bufio"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// releaseDirVar names a directory tools/release wrote; the test then
// checks that release (all five platforms, the two-architecture image)
// instead of building the host's platform itself.
const releaseDirVar = "BENCHSERVE_RELEASE_DIR"

// A release, built as tools/release builds it: the SHA-256 sums match the
// files, every binary is a static one for its platform, the image holds
// each Linux binary under a config that runs it as a user that is not
// root, and the host architecture's binary, taken out of the image's
// layer, prints the release's version and completes a benchmark against
// the simulator.
func TestReleaseImageRunsBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image's binaries are Linux ones; this runs one, so runs on Linux only")
	}
	dir := os.Getenv(releaseDirVar)
	plats := Platforms
	var wantVersion string // "": from the image's labels, with or without -dirty
	if dir == "" {
		dir = t.TempDir()
		plats = []Platform{{"linux", runtime.GOARCH}}
		mod, err := filepath.Abs("../..")
		if err != nil {
			t.Fatal(err)
		}
		tree, err := GitTree(context.Background(), mod)
		if err != nil {
			// Not a git checkout: Go records no commit either, so any
			// commit passes Build's check against the one Go records.
			t.Logf("%v; building as commit 0123…", err)
			tree.Commit = "0123456789abcdef0123456789abcdef01234567"
		}
		certs := filepath.Join(t.TempDir(), "certs.pem")
		if err := os.WriteFile(certs, []byte(testCerts), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = Build(context.Background(), Options{
			ModuleDir: mod, Out: dir, Tag: "v0.0.0-test", Commit: tree.Commit, Modified: tree.Modified,
			Created: tree.Time, CACerts: certs, Platforms: plats, Env: os.Environ(),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("built %s in %s", plats[0], time.Since(start).Round(time.Second))
		wantVersion = "benchserve v0.0.0-test-" + tree.Commit[:12]
		if tree.Modified {
			wantVersion += "-dirty"
		}
	} else {
		t.Logf("checking the release in %s (%s)", dir, releaseDirVar)
	}
	checkSums(t, dir, plats)
	for _, p := range plats {
		checkBinary(t, filepath.Join(dir, p.File()), p)
	}
	data, err := os.ReadFile(filepath.Join(dir, ImageFile))
	if err != nil {
		t.Fatal(err)
	}
	l := readLayout(t, data)
	var linux []string
	for _, p := range plats {
		if p.OS == "linux" {
			linux = append(linux, p.Arch)
		}
	}
	if len(l.Images) != len(linux) {
		t.Fatalf("%d images, want one for each of %q", len(l.Images), linux)
	}
	ran := false
	for i, img := range l.Images {
		if img.Platform.Arch != linux[i] {
			t.Errorf("image %d is for %s, want linux/%s", i, img.Platform, linux[i])
		}
		checkConfig(t, img)
		bin, err := os.ReadFile(filepath.Join(dir, img.Platform.File()))
		if err != nil {
			t.Fatal(err)
		}
		if string(img.Files["benchserve"].Data) != string(bin) {
			t.Errorf("%s: the image's /benchserve is not %s", img.Platform, img.Platform.File())
		}
		if img.Platform.Arch == runtime.GOARCH {
			runFromImage(t, img, wantVersion)
			ran = true
		}
	}
	if !ran {
		t.Errorf("no image for linux/%s to run", runtime.GOARCH)
	}
}

// checkSums checks SHA256SUMS: a line per binary and the image, each
// with the file's sum.
func checkSums(t *testing.T, dir string, plats []Platform) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{ImageFile: true}
	for _, p := range plats {
		want[p.File()] = true
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || !want[name] {
			t.Errorf("%s: line %q", SumsFile, sc.Text())
			continue
		}
		delete(want, name)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: %s has sum %x, not %s", SumsFile, name, got, sum)
		}
	}
	if len(want) > 0 {
		t.Errorf("%s lists none of %v", SumsFile, want)
	}
}

// checkBinary checks that path is an executable for p and, for Linux,
// static (no interpreter).
func checkBinary(t *testing.T, path string, p Platform) {
	t.Helper()
	var arch string
	switch p.OS {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		arch = map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				t.Errorf("%s is dynamically linked", path)
			}
		}
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		arch = map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
	case "windows":
		f, err := pe.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		arch = map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
	}
	if arch != p.Arch {
		t.Errorf("%s: a binary for %s/%q", path, p.OS, arch)
	}
}

// runFromImage writes the image's layer into a directory and runs its
// /benchserve: --version, then 20 requests against the simulator.
func runFromImage(t *testing.T, img layoutImage, wantVersion string) {
	t.Helper()
	root := t.TempDir()
	for name, f := range img.Files {
		path := filepath.Join(root, filepath.FromSlash(name))
		var err error
		if f.Dir {
			err = os.MkdirAll(path, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = os.WriteFile(path, f.Data, os.FileMode(f.Mode))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(root, img.Config.Config.Entrypoint[0])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang fails, not blocks
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "HF_HUB_OFFLINE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", exe, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	got := strings.TrimSuffix(run("--version"), "\n")
	if wantVersion == "" {
		// A tagged release prints its tag and commit; an untagged one
		// Go's version of the build (devel, or a pseudo-version from a
		// clone's history) with the commit.
		labels := img.Config.Config.Labels
		rev := labels["org.opencontainers.image.revision"][:12]
		got = strings.TrimSuffix(strings.TrimSuffix(got, "-dirty"), "+dirty")
		if v := labels["org.opencontainers.image.version"]; v != "" {
			if want := "benchserve " + v + "-" + rev; got != want {
				t.Errorf("--version printed %q, want %q", got, want)
			}
		} else if !strings.HasPrefix(got, "benchserve ") || !strings.HasSuffix(got, rev) {
			t.Errorf("--version printed %q, want benchserve <version> ending in the commit %s", got, rev)
		}
	} else if got != wantVersion {
		t.Errorf("--version printed %q, want %q", got, wantVersion)
	}
	result := filepath.Join(t.TempDir(), "result.jsonl")
	run("--sim", "--dataset-name", "random-ids", "--num-prompts", "20", "--random-input-len", "32", "--random-output-len", "16",
		"--output-file", result)
	data, err := os.ReadFile(result)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"completed": 20`) {
		t.Errorf("the run from the image did not complete 20 requests:\n%s", data)
	}
}
