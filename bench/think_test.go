package bench

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"benchserve/dataset"
)

func TestParseThink(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		spec    string
		scale   float64
		cap     *float64
		want    string // the error, or "" and then dist
		dist    string
		dataset string
	}{
		// A session trace waits its recorded delays unless told otherwise.
		{"auto", 1, nil, "", "trace", "tracelab"},
		{"", 1, nil, "", "trace", "mooncake-sessions"},
		{"trace", 2, nil, "", "trace", "tracelab"},
		{"0", 1, nil, "", "", "tracelab"},
		{"fixed:5", 1, nil, "", "fixed", "mooncake-sessions"},
		{"auto", 1, nil, "", "", "agentic-trace"},
		{"trace", 1, nil, "--think-time trace: --dataset-name agentic-trace has no recorded delays (mooncake-sessions and tracelab have)", "", "agentic-trace"},
		{"trace:5", 1, nil, `--think-time "trace:5"`, "", "tracelab"},
		{"0", 1, nil, "", "", ""},
		{"", 1, nil, "", "", ""},
		{"fixed:50", 1, nil, "", "fixed", ""},
		{"exp:12.5", 2, f(3), "", "exp", ""},
		{"normal:100,20", 0, nil, "", "normal", ""},
		{"fixed:", 1, nil, `--think-time "fixed:": expected auto, trace, 0, fixed:MS, exp:MS or normal:MS,SD (milliseconds >= 0)`, "", ""},
		{"fixed:-1", 1, nil, `--think-time "fixed:-1"`, "", ""},
		{"exp:nan", 1, nil, `--think-time "exp:nan"`, "", ""},
		{"normal:100", 1, nil, `--think-time "normal:100"`, "", ""},
		{"normal:100,-5", 1, nil, `--think-time "normal:100,-5"`, "", ""},
		{"gamma:5", 1, nil, `--think-time "gamma:5"`, "", ""},
		{"50", 1, nil, `--think-time "50"`, "", ""},
		{"0:5", 1, nil, `--think-time "0:5"`, "", ""},
		{"fixed:50", -1, nil, "--think-time-scale: must be a number >= 0, got -1", "", ""},
		{"fixed:50", math.Inf(1), nil, "--think-time-scale: must be a number >= 0, got +Inf", "", ""},
		{"fixed:50", 1, f(0), "--think-time-cap: must be a number of seconds > 0, got 0", "", ""},
	} {
		th, err := parseThink(&Config{ThinkTime: c.spec, ThinkTimeScale: c.scale, ThinkTimeCap: c.cap, DatasetName: c.dataset})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if c.want == "" && (got != "" || th.dist != c.dist) {
			t.Errorf("%q: %q, dist %q, want %q", c.spec, got, th.dist, c.dist)
		}
		if c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("%q scale %v: %q, want %q", c.spec, c.scale, got, c.want)
		}
	}
}

// The draws: each distribution's mean over many conversations and turns,
// clamping, scale and cap, and the same delay for the same (seed, i, k).
func TestThinkDelays(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	const n = 20000
	for _, c := range []struct {
		name       string
		cfg        Config
		mean, tol  float64 // milliseconds
		min, max   float64 // bounds of every draw, ms
		wantZeroes bool    // some draws clamped at 0
	}{
		{"fixed", Config{ThinkTime: "fixed:50", ThinkTimeScale: 1}, 50, 0, 50, 50, false},
		{"exp", Config{ThinkTime: "exp:50", ThinkTimeScale: 1}, 50, 2, 0, math.Inf(1), false},
		{"normal", Config{ThinkTime: "normal:100,20", ThinkTimeScale: 1}, 100, 1, 0, math.Inf(1), false},
		// Half the draws of N(0, 10) are negative, clamped at 0: the
		// mean is 10/sqrt(2 pi) = 3.99.
		{"normal clamped", Config{ThinkTime: "normal:0,10", ThinkTimeScale: 1}, 10 / math.Sqrt(2*math.Pi), 0.2, 0, math.Inf(1), true},
		{"scaled", Config{ThinkTime: "exp:50", ThinkTimeScale: 0.5}, 25, 1, 0, math.Inf(1), false},
		{"scale 0", Config{ThinkTime: "exp:50", ThinkTimeScale: 0}, 0, 0, 0, 0, true},
		{"capped", Config{ThinkTime: "fixed:50", ThinkTimeScale: 3, ThinkTimeCap: f(0.1)}, 100, 0, 100, 100, false},
		{"exp capped", Config{ThinkTime: "exp:50", ThinkTimeScale: 1, ThinkTimeCap: f(0.02)}, 50 * (1 - math.Exp(-20.0/50)), 1, 0, 20, false},
	} {
		th, err := parseThink(&c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, zeroes := 0.0, 0
		for j := range n {
			d := th.delay(j/4, 1+j%4)
			ms := float64(d) / float64(time.Millisecond)
			sum += ms
			if d == 0 {
				zeroes++
			}
			if ms < c.min || ms > c.max {
				t.Fatalf("%s: draw %v outside [%v, %v] ms", c.name, d, c.min, c.max)
			}
		}
		if m := sum / n; math.Abs(m-c.mean) > c.tol {
			t.Errorf("%s: mean %.3f ms, want %.3f +- %.3f", c.name, m, c.mean, c.tol)
		}
		if (zeroes > 0) != c.wantZeroes {
			t.Errorf("%s: %d draws of 0", c.name, zeroes)
		}
	}
	a, _ := parseThink(&Config{ThinkTime: "exp:50", ThinkTimeScale: 1, Params: dataset.Params{Seed: 7}})
	b, _ := parseThink(&Config{ThinkTime: "exp:50", ThinkTimeScale: 1, Params: dataset.Params{Seed: 7}})
	other, _ := parseThink(&Config{ThinkTime: "exp:50", ThinkTimeScale: 1, Params: dataset.Params{Seed: 8}})
	same, differ := 0, 0
	for i := range 100 {
		for k := 1; k < 5; k++ {
			if a.delay(i, k) != b.delay(i, k) {
				t.Fatalf("(seed 7, %d, %d): %v then %v", i, k, a.delay(i, k), b.delay(i, k))
			}
			if a.delay(i, k) == other.delay(i, k) {
				same++
			}
			if k > 1 && a.delay(i, k) != a.delay(i, k-1) {
				differ++
			}
		}
		if a.delay(i, 0) != 0 {
			t.Errorf("the first turn waits %v", a.delay(i, 0))
		}
	}
	if same > 0 || differ == 0 {
		t.Errorf("draws do not depend on the seed (%d equal) or the turn (%d differ)", same, differ)
	}
	if off, _ := parseThink(&Config{ThinkTime: "0", ThinkTimeScale: 1}); off.on() || off.delay(3, 2) != 0 {
		t.Errorf("--think-time 0 waits")
	}
}

func TestDueAt(t *testing.T) {
	epoch := time.Unix(1000, 0)
	for _, c := range []struct {
		prevEnd float64
		delay   time.Duration
		want    float64
	}{
		{0, 0, 0},
		{1.25, 50 * time.Millisecond, 1.3},
		{2, 0, 2},
		{0.000000001, time.Second, 1.000000001},
	} {
		due, at := dueAt(epoch, c.prevEnd, c.delay)
		if math.Abs(due-c.want) > 1e-12 || at.Sub(epoch) != sinceStart(c.want) {
			t.Errorf("end %v + %v: due %v at %v, want %v", c.prevEnd, c.delay, due, at.Sub(epoch), c.want)
		}
	}
}

// On the bubble's clock: each later turn of a conversation leaves exactly
// its think time after the reply before it ended, holding the one slot
// (the second conversation waits for the first to end), and its record
// says so; the run's end during a think time sends no more turns.
func TestThinkTimeDueTimes(t *testing.T) {
	bubble(t, func(t *testing.T) {
		srv := &memServer{hold: 10 * time.Millisecond}
		r := thinkingRunner(t, srv, 2, 3, 1)
		start := time.Now()
		recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, start)
		if len(recs) != 6 {
			t.Fatalf("%d records", len(recs))
		}
		at := srv.arrivals()
		for j := range recs {
			rec := &recs[j]
			s, k := j/3, j%3
			if !rec.Success || !rec.Round || rec.Session != s || rec.Turn != k {
				t.Fatalf("record %d: %+v", j, rec)
			}
			if k == 0 {
				continue
			}
			prev := &recs[j-1]
			if rec.PlannedDelay != 0.05 || sinceStart(rec.Intended) != sinceStart(prev.End)+50*time.Millisecond {
				t.Errorf("record %d: intended %v, planned %v, the turn before ended %v", j, rec.Intended, rec.PlannedDelay, prev.End)
			}
			if got := at[j].Sub(start); got != sinceStart(rec.Intended) {
				t.Errorf("turn %d of %d arrived at %v, due at %v", k, s, got, sinceStart(rec.Intended))
			}
		}
		// One slot: the second conversation starts when the first ended.
		if at[3].Sub(start) < sinceStart(recs[2].End) {
			t.Errorf("the second conversation started at %v, before the first ended at %v", at[3].Sub(start), recs[2].End)
		}
	})
	bubble(t, func(t *testing.T) {
		srv := &memServer{hold: 10 * time.Millisecond}
		r := memRunner(t, srv, 1, 0, nil)
		r.Tok = wordTok{}
		r.Rows[0] = dataset.Row{Turns: turns(3), PromptLen: 1, OutputLen: 1}
		r.traffic.think, _ = parseThink(&Config{ThinkTime: "fixed:1000", ThinkTimeScale: 1})
		start := time.Now()
		until := start.Add(500 * time.Millisecond)
		recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}, until: until}, start)
		if len(srv.arrivals()) != 1 || recs[1].Sent || recs[2].Sent {
			t.Errorf("the run's end during a think time: %d sent", len(srv.arrivals()))
		}
		if time.Since(start) > time.Second {
			t.Errorf("the run's end did not stop the think time: it took %v", time.Since(start))
		}
	})
}

// turns are n one-message user turns of a conversation.
func turns(n int) [][]byte {
	ts := make([][]byte, n)
	for k := range ts {
		ts[k] = []byte(`[{"role": "user", "content": "x"}]`)
	}
	return ts
}

// thinkingRunner is a runner of n conversations of k turns each, thinking
// 50 ms between turns, with limit request slots (0: none).
func thinkingRunner(t *testing.T, srv *memServer, n, k, limit int) *runner {
	t.Helper()
	r := memRunner(t, srv, n, limit, nil)
	r.Tok = wordTok{}
	for i := range r.Rows {
		r.Rows[i] = dataset.Row{Turns: turns(k), PromptLen: 1, OutputLen: 1}
	}
	r.traffic.think, _ = parseThink(&Config{ThinkTime: "fixed:50", ThinkTimeScale: 1})
	return r
}

// wordTok counts a text as one token (conversations count their history).
type wordTok struct{}

func (wordTok) Name() string               { return "word" }
func (wordTok) Encode(string, bool) []int  { return []int{1} }
func (wordTok) Count(string) int           { return 1 }
func (wordTok) Decode([]int) string        { return "x" }
func (wordTok) VocabSize() int             { return 2 }
func (wordTok) NumSpecialTokensToAdd() int { return 0 }
func (wordTok) BOSToken() string           { return "" }

// Under --max-sessions a conversation holds its session's place while it
// thinks, but --max-concurrency counts requests: with one request slot and
// two sessions, the second conversation's turns go out while the first
// thinks, and no two requests are ever in flight at once.
func TestMaxSessionsFreesTheSlotWhileThinking(t *testing.T) {
	bubble(t, func(t *testing.T) {
		srv := &memServer{hold: 10 * time.Millisecond}
		r := thinkingRunner(t, srv, 2, 3, 1)
		r.sessions = make(chan struct{}, 2)
		start := time.Now()
		recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, start)
		if len(recs) != 6 {
			t.Fatalf("%d records", len(recs))
		}
		for j := range recs {
			if !recs[j].Success {
				t.Fatalf("record %d: %+v", j, recs[j])
			}
		}
		// The second conversation began before the first had ended.
		if recs[3].Start >= recs[2].End {
			t.Errorf("the second conversation started at %v, after the first ended at %v", recs[3].Start, recs[2].End)
		}
		// One request slot: no two requests overlap.
		for a := range recs {
			for b := a + 1; b < len(recs); b++ {
				if recs[a].Start < recs[b].End && recs[b].Start < recs[a].End {
					t.Errorf("requests %d [%v, %v] and %d [%v, %v] were in flight together", a, recs[a].Start, recs[a].End, b, recs[b].Start, recs[b].End)
				}
			}
		}
	})
	// One session's place: the second conversation waits for the first,
	// think times included, however many request slots there are.
	bubble(t, func(t *testing.T) {
		srv := &memServer{hold: 10 * time.Millisecond}
		r := thinkingRunner(t, srv, 2, 2, 4)
		r.sessions = make(chan struct{}, 1)
		recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, time.Now())
		if len(recs) != 4 || recs[2].Start < recs[1].End {
			t.Errorf("the second conversation started at %v, before the first ended at %v", recs[2].Start, recs[1].End)
		}
	})
}
