package bench

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"benchserve/dataset"
)

// thinkTime is --think-time with --think-time-scale and --think-time-cap:
// the delay before each turn after the first of a conversation, drawn
// from --seed, the conversation's plan position and the turn alone, so
// that shards and reruns wait the same; or the trace's recorded delay.
type thinkTime struct {
	dist     string  // "": none (--think-time 0); fixed, exp, normal or trace
	mean, sd float64 // milliseconds
	scale    float64
	cap      time.Duration // 0: none
	seed     uint64
}

// on reports whether turns wait before they are sent.
func (t thinkTime) on() bool { return t.dist != "" }

// parseThink checks the three flags before any network call.
func parseThink(cfg *Config) (thinkTime, error) {
	t := thinkTime{scale: 1, seed: uint64(cfg.Seed)}
	spec := strings.TrimSpace(cfg.ThinkTime)
	bad := func() (thinkTime, error) {
		return t, usage("--think-time %q: expected auto, trace, 0, fixed:MS, exp:MS or normal:MS,SD (milliseconds >= 0)", cfg.ThinkTime)
	}
	delays := datasetSpec(cfg.DatasetName).Delays
	ms := func(s string) (float64, bool) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
	}
	switch dist, arg, _ := strings.Cut(spec, ":"); dist {
	case "", "auto", "0", "trace":
		if arg != "" {
			return bad()
		}
		// auto (the default): a session trace's recorded delays, else none.
		if dist == "trace" && !delays {
			return t, usage("--think-time trace: --dataset-name %s has no recorded delays (%s have)", cfg.DatasetName, strings.Join(traceDatasets(), " and "))
		}
		if dist == "trace" || dist != "0" && delays {
			t.dist = "trace"
		}
	case "fixed", "exp":
		v, ok := ms(arg)
		if !ok {
			return bad()
		}
		t.dist, t.mean = dist, v
	case "normal":
		a, b, found := strings.Cut(arg, ",")
		m, ok1 := ms(a)
		sd, ok2 := ms(b)
		if !found || !ok1 || !ok2 {
			return bad()
		}
		t.dist, t.mean, t.sd = dist, m, sd
	default:
		return bad()
	}
	if s := cfg.ThinkTimeScale; math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
		return t, usage("--think-time-scale: must be a number >= 0, got %s", fmtFloat(s))
	}
	t.scale = cfg.ThinkTimeScale
	var err error
	if t.cap, err = secondsFlag("--think-time-cap", cfg.ThinkTimeCap); err != nil {
		return t, err
	}
	return t, nil
}

// traceDatasets are the datasets whose conversations carry delays.
func traceDatasets() []string {
	var out []string
	for _, n := range dataset.Names() {
		if s, _ := dataset.Lookup(n); s.Delays {
			out = append(out, n)
		}
	}
	return out
}

// before is the think time before turn k of row, the conversation at
// plan position i: under trace, the delay the trace recorded (0 where it
// gave none), scaled and capped; else drawn (delay).
func (t thinkTime) before(i, k int, row *dataset.Row) time.Duration {
	if t.dist != "trace" {
		return t.delay(i, k)
	}
	if k < 1 || k >= len(row.TurnInfo) || !row.TurnInfo[k].HasDelay {
		return 0
	}
	return t.shape(row.TurnInfo[k].DelayMs)
}

// delay is the think time before turn k (k >= 1) of the conversation at
// plan position i: drawn, clamped at 0, scaled, then capped.
func (t thinkTime) delay(i, k int) time.Duration {
	if !t.on() || k < 1 || t.dist == "trace" {
		return 0
	}
	rng := rand.New(rand.NewPCG(t.seed, uint64(i)<<32|uint64(uint32(k))))
	ms := t.mean
	switch t.dist {
	case "exp":
		ms = rng.ExpFloat64() * t.mean
	case "normal":
		ms = max(0, t.mean+t.sd*rng.NormFloat64())
	}
	return t.shape(ms)
}

// shape scales and caps a delay of ms milliseconds.
func (t thinkTime) shape(ms float64) time.Duration {
	d := time.Duration(ms * t.scale * float64(time.Millisecond))
	if t.cap > 0 {
		d = min(d, t.cap)
	}
	return d
}

// dueAt is when a turn is due: the end of the turn before (prevEnd,
// seconds since epoch) plus its delay, as seconds since epoch (its
// record's Intended) and as the instant the pacer waits for.
func dueAt(epoch time.Time, prevEnd float64, delay time.Duration) (float64, time.Time) {
	end := time.Duration(math.Round(prevEnd * 1e9))
	return (end + delay).Seconds(), epoch.Add(end + delay)
}
