package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"
)

// The JSONL datasets (openai, custom, speed-bench, longbench_v2) read
// their files through jsonlLines.

// openDatasetFile opens a dataset file, with errors that name it (label)
// and say what it should be (want: "a JSONL file").
func openDatasetFile(path, label, want string) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", label)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %v", label, unwrapPath(err))
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory, not %s", label, want)
	}
	return f, nil
}

// jsonlLines calls fn with each line of the file (1-based number, the line
// without its newline) until fn returns false or an error. Lines may be of
// any length.
func jsonlLines(ctx context.Context, path, label string, fn func(n int, line []byte) (bool, error)) error {
	return jsonlLinesAt(ctx, path, label, func(n int, _ int64, line []byte) (bool, error) { return fn(n, line) })
}

// jsonlLinesAt is jsonlLines that also passes each line's byte offset.
func jsonlLinesAt(ctx context.Context, path, label string, fn func(n int, off int64, line []byte) (bool, error)) error {
	f, err := openDatasetFile(path, label, "a JSONL file")
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var long []byte
	var off int64
	for n := 1; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		if len(line) > 0 {
			start := off
			off += int64(len(line))
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
			ok, ferr := fn(n, start, line)
			if ferr != nil {
				return ferr
			}
			if !ok {
				return nil
			}
		}
		if err != nil {
			return nil
		}
	}
}

// blankLine reports whether a line is only whitespace, as Python's strip()
// would leave it empty.
func blankLine(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// checkObjectLine reports a line that is not valid JSON or not an object,
// with the position of a syntax error.
func checkObjectLine(line []byte) error {
	var v json.RawMessage
	if err := json.Unmarshal(line, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("invalid JSON at column %d: %v", utf8.RuneCount(line[:min(int(se.Offset), len(line))]), se)
		}
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if v[0] != '{' {
		return fmt.Errorf("not a JSON object but %s", pyTypeName(v))
	}
	return nil
}
