package version

import (
	"runtime/debug"
	"testing"
)

func TestFormat(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	info := func(v string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Version: v}}
		for i := 0; i < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	cases := []struct {
		info                  *debug.BuildInfo
		tag, commit, modified string
		want                  string
	}{
		{info(""), "", "", "", "devel"},
		{info("(devel)"), "", "", "", "devel"},
		{info("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "", "", "", "devel-0123456789ab"},
		{info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "", "", "", "devel-0123456789ab-dirty"},
		{info("v1.2.0"), "", "", "", "v1.2.0"},
		{info("v1.2.0", "vcs.revision", rev), "", "", "", "v1.2.0-0123456789ab"},
		{info("v0.0.0-20261201120000-0123456789ab+dirty", "vcs.revision", rev, "vcs.modified", "true"), "", "", "", "v0.0.0-20261201120000-0123456789ab+dirty"},
		// A release build: the tag and commit given by -ldflags -X win over
		// what Go derived (a pseudo-version, or nothing in a git worktree).
		{info("(devel)"), "v0.3.0", rev, "", "v0.3.0-0123456789ab"},
		{info("(devel)"), "v0.3.0", rev, "true", "v0.3.0-0123456789ab-dirty"},
		{info("v0.2.1-0.20261201120000-fedcba987654", "vcs.revision", "fedcba9876543210", "vcs.modified", "true"), "v0.3.0", rev, "false", "v0.3.0-0123456789ab"},
		{info("v0.3.0", "vcs.revision", rev, "vcs.modified", "false"), "v0.3.0", rev, "false", "v0.3.0-0123456789ab"},
		{info("(devel)"), "", rev, "", "devel-0123456789ab"},
	}
	for _, c := range cases {
		if got := format(c.info, c.tag, c.commit, c.modified); got != c.want {
			t.Errorf("format(%+v, %q, %q, %q) = %q, want %q", c.info.Main.Version, c.tag, c.commit, c.modified, got, c.want)
		}
	}
	if String() == "" {
		t.Error("String() is empty")
	}
}
