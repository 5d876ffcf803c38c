package cli

import (
	"testing"

	"benchserve/dataset"
)

// The flags the datasets declare are on the command line once each, in
// the Dataset group: at the reference's place when the table names them,
// else at the end (a new dataset's, with no row here).
func TestDatasetFlagsOnCommandLine(t *testing.T) {
	count := map[string]int{}
	for _, f := range flags {
		count[f.opt.Name]++
		if _, own := declared(f.opt.Name); own && f.group != gDataset {
			t.Errorf("%s is in group %s", f.opt.Name, f.group)
		}
	}
	for _, f := range dataset.Flags() {
		if count[f.Opt.Name] != 1 {
			t.Errorf("%s is on the command line %d times", f.Opt.Name, count[f.Opt.Name])
		}
	}
	appended := withDatasets(nil)
	if len(appended) != len(dataset.Flags()) {
		t.Fatalf("withDatasets(nil): %d flags, want the %d the datasets declare", len(appended), len(dataset.Flags()))
	}
	for i, f := range dataset.Flags() {
		if appended[i].opt.Name != f.Opt.Name || appended[i].group != gDataset {
			t.Errorf("appended %d: %s in %s, want %s in %s", i, appended[i].opt.Name, appended[i].group, f.Opt.Name, gDataset)
		}
	}
	// The binding reaches the Config's Params.
	c := new(cfg)
	datasetFlag("--gsp-num-groups").bind.set(c, 5)
	if c.GSPNumGroups != 5 || datasetFlag("--gsp-num-groups").bind.get(c) != 5 {
		t.Errorf("--gsp-num-groups 5 set GSPNumGroups %d", c.GSPNumGroups)
	}
}

func declared(name string) (dataset.Flag, bool) {
	for _, f := range dataset.Flags() {
		if f.Opt.Name == name {
			return f, true
		}
	}
	return dataset.Flag{}, false
}
