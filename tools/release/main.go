// Command release builds benchserve's release artifacts into a directory:
// the binaries for linux/amd64, linux/arm64, darwin/amd64, darwin/arm64
// and windows/amd64, a multi-arch container image of the Linux ones as an
// OCI image layout tarball (for skopeo copy or crane push), and their
// SHA-256 sums. Run it from the module's root:
//
//	go run ./tools/release -o dist -tag v0.3.0
//
// The image's timestamps are SOURCE_DATE_EPOCH if set, else the commit's
// time, so a rebuild of the same commit gives the same bytes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"benchserve/internal/release"
)

func main() {
	out := flag.String("o", "dist", "directory to write the artifacts to")
	tag := flag.String("tag", "", "the release's tag, vMAJOR.MINOR.PATCH; the tree must be clean and at the tag if it exists (default: a build that is not a release)")
	certs := flag.String("cacerts", release.CACertPath, "PEM bundle of CA certificates the image holds")
	platList := flag.String("platforms", "", "comma-separated GOOS/GOARCH pairs to build, e.g. linux/amd64 (default: all five)")
	flag.Parse()
	if flag.NArg() > 0 {
		fail("unexpected argument %q (flags: -o DIR, -tag vX.Y.Z, -cacerts FILE)", flag.Arg(0))
	}
	if *tag != "" && !release.ValidTag(*tag) {
		fail("-tag %q: want vMAJOR.MINOR.PATCH, e.g. v0.3.0 or v0.3.0-rc.1", *tag)
	}
	plats, err := platforms(*platList)
	if err != nil {
		fail("-platforms %q: %v", *platList, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	mod, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output()
	path, dir, _ := strings.Cut(strings.TrimSpace(string(mod)), " ")
	if err != nil || path != "benchserve" {
		fail("run it in the benchserve module (go list -m: %q, %v)", path, err)
	}
	tree, err := release.GitTree(ctx, dir)
	if err != nil {
		fail("the release records the commit it is built from: %v", err)
	}
	if *tag != "" {
		if tree.Modified {
			fail("-tag %s: the tree has changes not committed (git status); commit them, or leave out -tag for a build that is not a release", *tag)
		}
		if at := release.TagCommit(ctx, dir, *tag); at != "" && at != tree.Commit {
			fail("-tag %s: the tag is at %s, HEAD at %s", *tag, at, tree.Commit)
		}
	}
	created := tree.Time
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec < 0 {
			fail("SOURCE_DATE_EPOCH=%q: want Unix seconds", s)
		}
		created = time.Unix(sec, 0)
	}
	start := time.Now()
	names, err := release.Build(ctx, release.Options{
		ModuleDir: dir, Out: *out, Tag: *tag, Commit: tree.Commit, Modified: tree.Modified,
		Created: created, CACerts: *certs, Platforms: plats, Log: os.Stderr, Env: os.Environ(),
	})
	if err != nil {
		fail("%v", err)
	}
	fmt.Fprintf(os.Stderr, "release: %d files in %s in %.0f s\n", len(names), *out, time.Since(start).Seconds())
}

// platforms reads -platforms: nil for all, else the named ones of
// release.Platforms (a one-platform build is the quick way to an image
// for the host, as tools/k8s-e2e/run makes).
func platforms(list string) ([]release.Platform, error) {
	if list == "" {
		return nil, nil
	}
	var out []release.Platform
	for _, name := range strings.Split(list, ",") {
		i := slices.IndexFunc(release.Platforms, func(p release.Platform) bool { return p.String() == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("%q is not one of %v", name, release.Platforms)
		}
		out = append(out, release.Platforms[i])
	}
	return out, nil
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "release: error: "+format+"\n", a...)
	os.Exit(2)
}
