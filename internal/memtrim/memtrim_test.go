package memtrim

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// written is data the trim must leave alone.
var written = []byte("kept")

// residentExe is the resident size of the executable's read-only
// mappings, kB, from /proc/self/smaps.
func residentExe(t *testing.T) int {
	exe, _ := os.Executable()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	kb, in := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-"):
			in = f[5] == exe && !strings.Contains(f[1], "w")
		case in && len(f) >= 2 && f[0] == "Rss:":
			n, _ := strconv.Atoi(f[1])
			kb += n
		}
	}
	return kb
}

// On Linux the executable's read-only pages leave the resident set, the
// program goes on running from them (faulted back in), its writable data is
// untouched, and a second call does nothing more.
func TestExecutable(t *testing.T) {
	if runtime.GOOS != "linux" {
		if Executable() != 0 {
			t.Fatal("advised pages outside Linux")
		}
		return
	}
	written[0] = 'K'
	before := residentExe(t)
	n := Executable()
	after := residentExe(t)
	if n <= 0 {
		t.Fatal("no mapping of the executable advised")
	}
	if after >= before {
		t.Errorf("the executable's resident read-only pages: %d kB before, %d kB after", before, after)
	}
	if string(written) != "Kept" {
		t.Errorf("writable data changed: %q", written)
	}
	if s := strconv.Itoa(12345); s != "12345" { // code and constants, paged back in
		t.Errorf("strconv.Itoa = %q", s)
	}
	if again := Executable(); again != n {
		t.Errorf("second call advised %d bytes, want the first's %d", again, n)
	}
}
