package bench

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestVerdict(t *testing.T) {
	cores := float64(runtime.GOMAXPROCS(0))
	cases := []struct {
		name string
		r    checkResult
		dur  float64
		want []string
		not  []string
	}{
		{"idle", checkResult{cpu: 100 * time.Millisecond}, 10, []string{"the client had headroom"}, []string{"distorted", "simulator"}},
		{"busy", checkResult{cpu: time.Duration(9 * cores * float64(time.Second))}, 10,
			[]string{"may be distorted: client CPU at 90% of"}, []string{"simulator"}},
		{"gc and lag", checkResult{gcPause: 200 * time.Millisecond, lagP99: 0.002}, 10,
			[]string{"GC pauses 2.0% of the run", "dispatch lag p99 2.00 ms"}, nil},
		{"with sim", checkResult{cpu: 100 * time.Millisecond, withSim: true}, 10,
			[]string{"the client had headroom (CPU and GC figures include the in-process simulator of --sim)"}, nil},
		{"busy with sim", checkResult{cpu: time.Duration(9 * cores * float64(time.Second)), withSim: true}, 10,
			[]string{"may be distorted: client CPU at 90%", "include the in-process simulator"}, nil},
	}
	for _, c := range cases {
		got := verdict(c.r, c.dur)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: verdict %q lacks %q", c.name, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: verdict %q has %q", c.name, got, w)
			}
		}
	}
}
