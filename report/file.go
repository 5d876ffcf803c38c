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
// opened for appending. It creates the file if it is absent and leaves an
// existing one untouched.
func CheckWritable(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	return nil
}
