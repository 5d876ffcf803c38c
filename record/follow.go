package record

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// Follower follows a shard's record file as its shard writes it, for a
// merge that waits: its header, how many requests it has recorded, its
// end line. Each Update reads only what was appended since the last, and
// only whole lines; request lines are counted, not decoded.
type Follower struct {
	Path    string
	Header  *Header // nil: not written yet
	End     *End    // nil: not written yet
	Records int     // request lines since the header
	off     int64
}

// Update reads the lines appended since the last call. A later run's
// header starts the count again, as Read keeps only the last run.
func (f *Follower) Update() error {
	fh, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	if _, err := fh.Seek(f.off, io.SeekStart); err != nil {
		return err
	}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a line still being written: the next Update's
	})
	for sc.Scan() {
		line := sc.Bytes()
		f.off += int64(len(line)) + 1
		switch {
		case len(bytes.TrimSpace(line)) == 0:
		case bytes.HasPrefix(line, []byte(`{"seq": `)): // Writer's request lines
			f.Records++
		default:
			var h Header
			var e End
			isHeader, isEnd, err := decodeShardLine(line, &h, &e)
			switch {
			case err != nil:
				return fmt.Errorf("%s: %v", f.Path, err)
			case isEnd:
				f.End = &e
			case isHeader:
				f.Header, f.End, f.Records = &h, nil, 0
			}
		}
	}
	return sc.Err()
}
