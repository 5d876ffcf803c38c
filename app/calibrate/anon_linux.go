package calibrate

import (
	"os"
	"strconv"
)

// anonReader reads pid's RssAnon from /proc. The file is opened once: the
// open file stays the process's own, so a pid reused after it exits reads
// as an error, never as another process's memory.
func anonReader(pid int) (read func() (int64, bool), closeFn func()) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, nil
	}
	buf := make([]byte, 8<<10)
	return func() (int64, bool) {
		n, _ := f.ReadAt(buf, 0)
		return parseRssAnon(buf[:n])
	}, func() { f.Close() }
}
