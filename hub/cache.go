package hub

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// The cache layout is huggingface_hub's:
//
//	<cache>/<models|datasets|spaces>--<org>--<name>/
//	  blobs/<etag>                         the file's bytes
//	  snapshots/<commit>/<filename>        relative symlink to the blob
//	  refs/<revision>                      the commit a branch or tag named

// commitRE is huggingface_hub's REGEX_COMMIT_HASH.
var commitRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

// repoFolder is the cache folder of a repo ("datasets--org--name").
func repoFolder(repoType, repoID string) string {
	return strings.Join(append([]string{repoType + "s"}, strings.Split(repoID, "/")...), "--")
}

func pointerPath(storage, commit, filename string) string {
	return filepath.Join(storage, "snapshots", commit, filepath.FromSlash(filename))
}

func exists(path string) bool {
	_, err := os.Stat(path) // follows the symlink: a dangling one does not count
	return err == nil
}

// cachedPointer returns the snapshot file for revision if the cache has it:
// revision is a commit hash, or refs/<revision> names one.
func cachedPointer(storage, revision, filename string) (string, bool) {
	commit := revision
	if !commitRE().MatchString(revision) {
		b, err := os.ReadFile(filepath.Join(storage, "refs", filepath.FromSlash(revision)))
		if err != nil {
			return "", false
		}
		commit = strings.TrimSpace(string(b))
		if !safeName(commit) {
			return "", false
		}
	}
	p := pointerPath(storage, commit, filename)
	return p, exists(p)
}

// writeRef records that revision names commit, rewriting only on change.
func writeRef(storage, revision, commit string) error {
	path := filepath.Join(storage, "refs", filepath.FromSlash(revision))
	if b, err := os.ReadFile(path); err == nil && string(b) == commit {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(commit), 0o644)
}

// symlink is os.Symlink, replaced in tests to take the copy fallback.
var symlink = os.Symlink

// linkBlob makes pointer a relative symlink to blob, or a copy of it where
// the file system has no symlinks.
func linkBlob(blob, pointer string) error {
	if err := os.MkdirAll(filepath.Dir(pointer), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(pointer), blob)
	if err != nil {
		return err
	}
	_ = os.Remove(pointer) // a dangling link left by a deleted blob
	if symlink(rel, pointer) == nil {
		return nil
	}
	return copyFile(blob, pointer)
}

// copyFile copies src to dst through a temporary file, so dst is either
// absent or complete.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".incomplete"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// safeName reports whether s can be used as one path element: the Hub's
// commits and etags are hex, but a server could send anything.
func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`+"\x00")
}

// checkPath reports why a repo-relative path ("dir/file.json",
// "refs/pr/1") cannot be used in the cache, or nil.
func checkPath(what, p string) error {
	if p == "" {
		return fmt.Errorf("empty %s", what)
	}
	if strings.ContainsAny(p, `\`+"\x00") || strings.HasPrefix(p, "/") {
		return fmt.Errorf("invalid %s %q", what, p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("invalid %s %q", what, p)
		}
	}
	return nil
}

// repoIDRE follows huggingface_hub's validate_repo_id: "name" or
// "org/name", word characters, dots and dashes.
var repoIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([\w.-]+/)?[\w.-]+$`) })

func checkRepo(repoType, repoID string) error {
	switch repoType {
	case "model", "dataset", "space":
	default:
		return fmt.Errorf("invalid repo type %q: want model, dataset or space", repoType)
	}
	if !repoIDRE().MatchString(repoID) || strings.Contains(repoID, "--") || strings.Contains(repoID, "..") {
		return fmt.Errorf("invalid repo id %q: want \"name\" or \"org/name\"", repoID)
	}
	return nil
}
