package dataset

import (
	"os"
	"path/filepath"
)

// CacheDir is where datasets keep what they reuse between runs:
// $XDG_CACHE_HOME/benchserve, else ~/.cache/benchserve.
func CacheDir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "benchserve")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "benchserve")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "benchserve")
	}
	return filepath.Join(d, "benchserve")
}
