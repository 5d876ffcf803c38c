package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress is a tqdm-style bar on stderr: percentage, bar, count, elapsed,
// remaining and rate, redrawn at most ten times a second. A run by time
// fills the bar by time.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	limit time.Duration // --duration; 0: by count
	n     int
	start time.Time
	last  time.Time
}

// newProgress is a bar for total requests (0: not known), or for a run
// of limit (when not 0).
func newProgress(w io.Writer, total int, limit time.Duration) *progress {
	p := &progress{w: w, total: total, limit: limit, start: time.Now()}
	p.draw(true)
	return p
}

// add counts one finished request. A nil bar does nothing.
func (p *progress) add() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.draw(p.n == p.total)
}

// close draws the final state and ends the line.
func (p *progress) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(true)
	fmt.Fprintln(p.w)
}

func (p *progress) draw(force bool) {
	now := time.Now()
	if !force && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start)
	const width = 30
	if p.limit > 0 {
		frac := min(1, elapsed.Seconds()/p.limit.Seconds())
		full := int(frac * width)
		bar := strings.Repeat("█", full) + strings.Repeat(" ", width-full)
		fmt.Fprintf(p.w, "\r%3.0f%%|%s| %d done [%s<%s]", frac*100, bar, p.n, clock(elapsed), clock(max(0, p.limit-elapsed)))
		return
	}
	frac := 0.0
	if p.total > 0 {
		frac = float64(p.n) / float64(p.total)
	}
	full := int(frac * width)
	bar := strings.Repeat("█", full) + strings.Repeat(" ", width-full)
	rate, remaining := "?", "?"
	if s := elapsed.Seconds(); p.n > 0 && s > 0 {
		r := float64(p.n) / s
		rate = fmt.Sprintf("%.2f", r)
		remaining = clock(time.Duration(float64(p.total-p.n) / r * float64(time.Second)))
	}
	fmt.Fprintf(p.w, "\r%3.0f%%|%s| %d/%d [%s<%s, %sit/s]", frac*100, bar, p.n, p.total, clock(elapsed), remaining, rate)
}

func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}
