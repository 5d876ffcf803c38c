package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Platform is a GOOS/GOARCH pair; in JSON, an OCI platform.
type Platform struct {
	OS   string `json:"os"`
	Arch string `json:"architecture"`
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// File is the name of the platform's binary in a release.
func (p Platform) File() string {
	name := "benchserve-" + p.OS + "-" + p.Arch
	if p.OS == "windows" {
		name += ".exe"
	}
	return name
}

// Platforms are those benchserve ships for.
var Platforms = []Platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"},
}

// Names of the files beside the binaries.
const (
	SumsFile  = "SHA256SUMS"
	ImageFile = "benchserve-image.oci.tar"
)

// Options say what to build.
type Options struct {
	ModuleDir string     // the benchserve module's root
	Out       string     // the directory written to
	Tag       string     // the release's tag, or "" for a build that is not one
	Commit    string     // the full commit hash of the tree built
	Modified  bool       // the tree has changes not committed
	Created   time.Time  // the image's timestamps
	CACerts   string     // the PEM bundle the image holds
	Platforms []Platform // nil: Platforms
	Log       io.Writer  // a line per file written
	// Env is the environment go build runs in (the caller's: PATH, HOME,
	// GOCACHE...); the build's own settings are added to it.
	Env []string
}

var tagPattern = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// ValidTag reports whether tag is a semantic version tag, v1.2.3 or
// v1.2.3-rc.1.
func ValidTag(tag string) bool { return tagPattern.MatchString(tag) }

// Build writes the binaries of o.Platforms, the image of the Linux ones
// and the SHA-256 sums of them all into o.Out, and returns the names
// written. The binaries are static (CGO_ENABLED=0), built with -trimpath
// and with the tag and commit set in internal/version, so the same tree
// and toolchain give the same bytes.
func Build(ctx context.Context, o Options) ([]string, error) {
	if o.Tag != "" && !ValidTag(o.Tag) {
		return nil, fmt.Errorf("tag %q: want vMAJOR.MINOR.PATCH, e.g. v0.3.0 or v0.3.0-rc.1", o.Tag)
	}
	if o.Commit == "" {
		return nil, fmt.Errorf("no commit: the binaries and the image record the commit they were built from")
	}
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates for the image: %v (Debian's ca-certificates package installs %s)", err, CACertPath)
	}
	if !bytes.Contains(certs, []byte("-----BEGIN CERTIFICATE-----")) {
		return nil, fmt.Errorf("CA certificates for the image: %s holds no PEM certificate", o.CACerts)
	}
	plats := o.Platforms
	if plats == nil {
		plats = Platforms
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	logf := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", a...)
		}
	}
	var names []string
	im := Image{Binaries: map[string][]byte{}, CACerts: certs, Created: o.Created, Version: o.Tag, Revision: o.Commit, Ref: o.Tag}
	for _, p := range plats {
		path := filepath.Join(o.Out, p.File())
		if err := buildOne(ctx, o, p, path); err != nil {
			return nil, err
		}
		names = append(names, p.File())
		logf("built %s", path)
		if p.OS == "linux" {
			if im.Binaries[p.Arch], err = os.ReadFile(path); err != nil {
				return nil, err
			}
		}
	}
	if len(im.Binaries) > 0 {
		var buf bytes.Buffer
		if err := WriteImage(&buf, im); err != nil {
			return nil, err
		}
		path := filepath.Join(o.Out, ImageFile)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		names = append(names, ImageFile)
		logf("wrote %s (%d MB)", path, buf.Len()>>20)
	}
	if err := writeSums(o.Out, names); err != nil {
		return nil, err
	}
	logf("wrote %s", filepath.Join(o.Out, SumsFile))
	return append(names, SumsFile), nil
}

// buildOne runs go build for p. The environment's GOFLAGS and CPU level
// settings are replaced, so that the binary depends on the tree alone and
// runs on every CPU of its architecture.
func buildOne(ctx context.Context, o Options, p Platform, path string) error {
	modified := "false"
	if o.Modified {
		modified = "true"
	}
	x := "-X benchserve/internal/version."
	ldflags := x + "commit=" + o.Commit + " " + x + "modified=" + modified
	if o.Tag != "" {
		ldflags += " " + x + "tag=" + o.Tag
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=true", "-ldflags", ldflags, "-o", abs, "./cmd/benchserve")
	cmd.Dir = o.ModuleDir
	cmd.Env = append(slices.Clip(o.Env), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch,
		"GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %v\n%s", p, err, out)
	}
	// In a clone, Go records the commit too (vcs.revision); it must be the
	// one given. In a git worktree inside another checkout, Go would find
	// that checkout's (golang/go#58218).
	info, err := buildinfo.ReadFile(abs)
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != o.Commit {
			return fmt.Errorf("%s: go build recorded commit %s, not %s, the tree's: is %s a git worktree inside another checkout? Build from a clone", path, s.Value, o.Commit, o.ModuleDir)
		}
	}
	return nil
}

// writeSums writes the SHA-256 sums of names in sha256sum's format.
func writeSums(dir string, names []string) error {
	var b strings.Builder
	sorted := slices.Sorted(slices.Values(names))
	for _, n := range sorted {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return os.WriteFile(filepath.Join(dir, SumsFile), []byte(b.String()), 0o644)
}
