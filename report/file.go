package report

import (
	"fmt"
	"os"
)

// Append adds line to the result file at path, creating it if needed: one
// write in append mode, then fsync. An existing file is never truncated, so
// several runs (or machines sharing a file system) accumulate lines.
func Append(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("result file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("result file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	return nil
}

// CheckWritable fails early, before a run, when the result file cannot be
// opened for appending. An existing file is left untouched; an absent one
// is created to prove it can be, then removed.
func CheckWritable(path string) error {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	// A file that did not exist is removed again, so that a run that stops
	// before its result leaves nothing behind.
	if os.IsNotExist(statErr) {
		os.Remove(path)
	}
	return nil
}
