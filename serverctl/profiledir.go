package serverctl

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// The client creates the profile output directory, as the reference
// does, but the server writes into it only when it runs on this machine
// (SGLang creates it again itself when it exports). So the directories
// the client created are removed at the end if they are still empty.

// mkdirAll is os.MkdirAll returning the directories it created.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return missing, nil
}

// removeEmpty removes those of dirs that are empty, deepest first (a
// directory that holds anything stays).
func removeEmpty(dirs []string) {
	dirs = slices.Clone(dirs)
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range dirs {
		os.Remove(d)
	}
}

// Cleanup removes the output directories left empty when the run ends.
// When the server stops profiling on its own (--profile-steps, or
// --profile-num-steps outside PD mode) it may write after the run, so
// then they are kept.
func (p *Profiler) Cleanup() {
	opt := p.opt
	selfStop := opt.Steps != nil || (!opt.PDSeparated && opt.NumSteps != nil)
	if p.started && selfStop {
		return
	}
	removeEmpty(p.made)
	p.made = nil
}
