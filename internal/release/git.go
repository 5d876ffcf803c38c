package release

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Tree is the state of a git checkout.
type Tree struct {
	Commit   string    // HEAD's full hash
	Modified bool      // git status lists a change
	Time     time.Time // HEAD's commit time
}

// GitTree reads the checkout at dir with git.
func GitTree(ctx context.Context, dir string) (Tree, error) {
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
				err = fmt.Errorf("%s", strings.TrimSpace(string(ee.Stderr)))
			}
			return "", fmt.Errorf("git %s in %s: %v", strings.Join(args, " "), dir, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	var t Tree
	var err error
	if t.Commit, err = git("rev-parse", "HEAD"); err != nil {
		return t, err
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		return t, err
	}
	t.Modified = status != ""
	ct, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return t, err
	}
	sec, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return t, fmt.Errorf("git log: commit time %q: %v", ct, err)
	}
	t.Time = time.Unix(sec, 0).UTC()
	return t, nil
}

// TagCommit is the commit tag names, or "" when there is no such tag yet.
func TagCommit(ctx context.Context, dir, tag string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "-q", "--verify", "refs/tags/"+tag+"^{commit}").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
