//go:build linux

// Package memtrim gives back the resident pages a process no longer needs
// once it has started, so that its peak memory is that of its work.
package memtrim

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Executable drops the process's resident pages of its own executable's
// read-only mappings (code and constant data): the kernel keeps them in its
// page cache and maps back, from there, any page touched again. Start-up
// reads some of them once and never again: the built-in tokenizer's
// vocabulary, as tiktoken-go ships it, is a 200,000-entry map literal whose
// 6 MB of keys and values are read once to build its table. It touches
// nothing writable, and reports how many bytes of mappings it advised. It
// acts once per process; later calls do nothing.
func Executable() int64 {
	once.Do(func() { advised = trim() })
	return advised
}

var (
	once    sync.Once
	advised int64
)

func trim() int64 {
	exe, err := os.Executable()
	if err != nil {
		return 0
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") || !strings.HasPrefix(fields[1], "r") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED); e == 0 {
			n += int64(end - start)
		}
	}
	return n
}
