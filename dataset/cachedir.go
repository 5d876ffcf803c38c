package dataset

import "path/filepath"

// CacheDir is where datasets keep what they reuse between runs, found
// with getenv (the command's environment): $XDG_CACHE_HOME/benchserve,
// else ~/.cache/benchserve, else (Windows) %LocalAppData%\benchserve; ""
// when none is known, and then nothing is cached.
func CacheDir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "benchserve")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "benchserve")
	}
	if d := getenv("LocalAppData"); d != "" {
		return filepath.Join(d, "benchserve")
	}
	return ""
}
