// Package version is benchserve's own version, read from the build
// information Go records in the binary, so that a result line says which
// client measured it.
package version

import (
	"runtime/debug"
	"strings"
	"sync"
)

// Set by a release build (tools/release) with -ldflags -X: the tag, the
// commit and "true" for a modified tree. The commit is passed too because
// Go records no vcs.revision in a linked git worktree (golang/go#58218).
var tag, commit, modified string

// String is the version: the release tag, else the module version when
// the build has one, else "devel"; then the commit (12 hex digits) when
// the version does not already hold it, and "-dirty" for a build from a
// modified tree.
var String = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = &debug.BuildInfo{}
	}
	return format(info, tag, commit, modified)
})

func format(info *debug.BuildInfo, tag, commit, modified string) string {
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if tag != "" {
		v = tag
	}
	if commit != "" {
		rev, dirty = commit, modified == "true"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && !strings.Contains(v, rev) {
		v += "-" + rev
	}
	// A pseudo-version from a modified tree already ends in "+dirty".
	if dirty && !strings.HasSuffix(v, "+dirty") {
		v += "-dirty"
	}
	return v
}
