package livemetrics

import "time"

// lagWindow keeps the largest lag of each of the last lagSeconds whole
// seconds: its max is the worst lag of the last 10 s, which a scrape
// every 15 s or so still sees (a last value would show one request of
// thousands; a running max would never come down).
type lagWindow struct {
	sec [lagSeconds]int64
	top [lagSeconds]float64
}

const lagSeconds = 10

func (w *lagWindow) add(now time.Time, v float64) {
	t := now.Unix()
	i := t % lagSeconds
	if w.sec[i] != t {
		w.sec[i], w.top[i] = t, 0
	}
	w.top[i] = max(w.top[i], v)
}

func (w *lagWindow) worst(now time.Time) float64 {
	t := now.Unix()
	m := 0.0
	for i := range w.sec {
		if w.sec[i] > t-lagSeconds && w.sec[i] <= t {
			m = max(m, w.top[i])
		}
	}
	return m
}
