package hub

import (
	"fmt"
	"io"
	"time"
)

// progressMin is the size from which a download reports progress; smaller
// files finish before a line would help. Tests lower it.
var progressMin int64 = 10 << 20

// progressEvery is the least time between two progress lines.
const progressEvery = 2 * time.Second

// progress counts the bytes written through it and prints a line such as
// "hub: data.json: 120.5 / 673.0 MB" at most every progressEvery.
type progress struct {
	w           io.Writer
	name        string
	done, total int64
	now         func() time.Time
	last        time.Time
}

func newProgress(w io.Writer, name string, done, total int64) *progress {
	p := &progress{w: w, name: name, done: done, total: total, now: time.Now}
	p.last = p.now()
	return p
}

func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if t := p.now(); t.Sub(p.last) >= progressEvery {
		p.last = t
		p.print("")
	}
	return len(b), nil
}

// finish prints the last line.
func (p *progress) finish(ok bool) {
	if ok {
		p.print(" done")
	} else {
		p.print(" stopped")
	}
}

func (p *progress) print(suffix string) {
	if p.total < 0 {
		fmt.Fprintf(p.w, "hub: %s: %.1f MB%s\n", p.name, float64(p.done)/1e6, suffix)
		return
	}
	fmt.Fprintf(p.w, "hub: %s: %.1f / %.1f MB%s\n", p.name, float64(p.done)/1e6, float64(p.total)/1e6, suffix)
}
