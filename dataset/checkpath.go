package dataset

import "slices"

// readsPath are the datasets that read --dataset-path when it is given and
// fail when it cannot be opened (mooncake downloads its trace to it).
var readsPath = []string{"random", "sharegpt", "custom", "mmmu", "speed-bench", "agentic-trace", "openai", "longbench_v2"}

// CheckPath opens --dataset-path when p's dataset reads it, so that a
// missing or unreadable file is named before the run waits for a server;
// the message is the loader's.
func CheckPath(p Params) error {
	if p.Path == "" || !slices.Contains(readsPath, p.Name) {
		return nil
	}
	f, err := openDatasetFile(p.Path, "--dataset-path "+p.Path, "a file")
	if err != nil {
		return err
	}
	return f.Close()
}
