package bench

import (
	"errors"

	"benchserve/dataset"
	"benchserve/report"
)

// checkFiles opens what the run reads and writes (the dataset file, the
// result and record files), so that a missing or unwritable one is named
// before the run waits for the server.
func checkFiles(cfg *Config, outputFile string, replay bool) error {
	if err := report.CheckWritable(outputFile); err != nil {
		return failure("--output-file: %v", err)
	}
	if cfg.RecordFile != nil {
		if err := report.CheckWritable(*cfg.RecordFile); err != nil {
			return failure("--record-file: %v", errors.Unwrap(err))
		}
	}
	if cfg.SteadyStateOutputFile != nil {
		if err := report.CheckWritable(*cfg.SteadyStateOutputFile); err != nil {
			return failure("--steady-state-output-file: %v", errors.Unwrap(err))
		}
	}
	if replay {
		return nil // no dataset is read
	}
	if err := dataset.CheckPath(datasetParams(cfg, "")); err != nil {
		return failure("%v", err)
	}
	return nil
}
