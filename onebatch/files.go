package onebatch

import (
	"benchserve/dataset"
	"benchserve/report"
)

// checkFiles opens what the run reads and writes (the dataset file, the
// result files), so that a missing or unwritable one is named before the
// run contacts the server.
func checkFiles(c *Config) error {
	if c.ResultFilename != "" {
		if err := report.CheckWritable(c.ResultFilename); err != nil {
			return failure("--result-filename: %v", unwrap(err))
		}
	}
	if p := c.PydanticResultFilename; p != nil {
		if err := report.CheckWritable(*p); err != nil {
			return failure("--pydantic-result-filename: %v", unwrap(err))
		}
	}
	if c.FixedPromptFile == "" {
		if err := dataset.CheckPath(dataset.Params{Name: c.DatasetName, Path: c.DatasetPath}); err != nil {
			return failure("%v", err)
		}
	}
	return nil
}

// unwrap is CheckWritable's cause without its "result file:" prefix.
func unwrap(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return u.Unwrap()
	}
	return err
}
