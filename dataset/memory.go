package dataset

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// rowBytes is a Row's own size, before the text and lists it points to.
var rowBytes = float64(reflect.TypeFor[Row]().Size())

// textBytesPerToken is what the estimates take a decoded token to cost:
// less than most tokenizers' average, so that a refusal is never a close
// call.
const textBytesPerToken = 3

// smallBuild is a build too small to check: reading the system's memory
// (/proc/meminfo and the cgroup's files) is most of a small random run's
// dataset time.
const smallBuild = 64 << 20

// fitMemory refuses a build whose rows would take about need bytes when
// less is available: the kernel would kill the run after minutes of
// building instead. what names the flag and its value, lower what to
// change.
func fitMemory(env Env, need float64, what, lower string) error {
	if need < smallBuild {
		return nil
	}
	avail, ok := availableMemory(env)
	if !ok || need <= avail {
		return nil
	}
	return fmt.Errorf("%s: the prompts would take about %s of memory, more than the %s available; lower %s",
		what, humanBytes(need), humanBytes(avail), lower)
}

func availableMemory(env Env) (float64, bool) {
	if env.MemAvailable != nil {
		return env.MemAvailable()
	}
	return systemMemAvailable()
}

// systemMemAvailable is Linux's MemAvailable, lowered to what the
// process's cgroup (v2) still allows; false elsewhere.
func systemMemAvailable() (float64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	avail, ok := memInfoAvailable(data)
	if !ok {
		return 0, false
	}
	if left, ok := cgroupLeft(); ok {
		avail = min(avail, left)
	}
	return avail, true
}

// memInfoAvailable reads "MemAvailable: N kB" from /proc/meminfo.
func memInfoAvailable(data []byte) (float64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		return float64(kb) * 1024, err == nil
	}
	return 0, false
}

// cgroupLeft is what the process's memory cgroup still allows, which a
// container's limit sets below the machine's memory: v2's memory.max less
// memory.current, or v1's limit_in_bytes less usage_in_bytes.
func cgroupLeft() (float64, bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.SplitN(line, ":", 3) // id:controllers:path
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			if left, ok := limitLeft("/sys/fs/cgroup"+f[2], "memory.max", "memory.current"); ok {
				return left, true
			}
		} else if slices.Contains(strings.Split(f[1], ","), "memory") {
			if left, ok := limitLeft("/sys/fs/cgroup/memory"+f[2], "memory.limit_in_bytes", "memory.usage_in_bytes"); ok {
				return left, true
			}
		}
	}
	return 0, false
}

// limitLeft reads a limit file and a usage file in dir; v2's "max" (no
// limit) is not a number and gives false.
func limitLeft(dir, limitFile, usageFile string) (float64, bool) {
	limit, err1 := os.ReadFile(filepath.Join(dir, limitFile))
	used, err2 := os.ReadFile(filepath.Join(dir, usageFile))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	lim, err1 := strconv.ParseFloat(strings.TrimSpace(string(limit)), 64)
	cur, err2 := strconv.ParseFloat(strings.TrimSpace(string(used)), 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return max(0, lim-cur), true
}

// humanBytes writes n in decimal units with one decimal: "4.1 TB".
func humanBytes(n float64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB", "EB"}
	i := 0
	for n >= 1000 && i < len(units)-1 {
		n /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f bytes", n)
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// meanLen is the mean length compute_random_lens draws from [lo, full].
func meanLen(full int, lo int64) float64 {
	if full <= 0 {
		return 0
	}
	return (float64(lo) + float64(full)) / 2
}
