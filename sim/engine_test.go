package sim

import (
	"context"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// These tests drive the engine directly on the fake clock of
// testing/synctest: time moves only when every goroutine waits, so a step
// ends exactly when the model says and the times below are exact.

// sleepUntil is the engine's wait on a plain timer (clock.WaitUntil
// spins for the last stretch, which a fake clock never ends).
func sleepUntil(ctx context.Context, t time.Time) bool {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// testConfig is a small, round model: prefill 10 ms + 1 ms per token;
// decode 5 ms + 1 ms per running request.
func testConfig() Config {
	c, _ := Preset(PresetH100Llama8B)
	c.MaxRunningRequests = 64
	c.KVTokens = 1 << 20
	c.MaxPrefillTokens = 1 << 20
	c.PageSize = 4
	c.PrefillTokensPerSec = 1000
	c.PrefillOverhead = 10 * time.Millisecond
	c.DecodeBase = 5 * time.Millisecond
	c.DecodePerRequest = time.Millisecond
	c.EOSProbability = 0
	return c
}

// startEngine runs an engine until the test function returns.
func startEngine(t *testing.T, cfg Config) *engine {
	t.Helper()
	e, run := heldEngine(t, cfg)
	run()
	return e
}

// heldEngine returns an engine and the function that starts it, so that
// requests submitted before are all in its queue at its first step.
func heldEngine(t *testing.T, cfg Config) (*engine, func()) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e := newEngine(cfg, nil, sleepUntil)
	ctx, cancel := context.WithCancel(context.Background())
	return e, func() {
		go e.run(ctx)
		t.Cleanup(func() { cancel(); <-e.stopped })
	}
}

type chunkAt struct {
	at time.Duration // since the bubble's start
	n  int
}

// outcome is what a client of one request saw.
type outcome struct {
	submitted time.Duration
	chunks    []chunkAt
	p         progress
	done      chan struct{}
}

func (o *outcome) ttft() time.Duration { return o.chunks[0].at - o.submitted }

func (o *outcome) tokens() int {
	n := 0
	for _, c := range o.chunks {
		n += c.n
	}
	return n
}

// client submits requests and collects what each one's writer would see.
type client struct {
	e     *engine
	t0    time.Time
	wg    sync.WaitGroup
	delay time.Duration // time the writer spends on each chunk
}

func newClient(e *engine) *client { return &client{e: e, t0: time.Now()} }

func ids(n, salt int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = salt*1_000_003 + i
	}
	return s
}

// send submits a request of prompt tokens (distinct per salt) for maxNew
// tokens and returns its outcome, complete after c.wg.Wait.
func (c *client) send(prompt []int, maxNew int, ignoreEOS bool) *outcome {
	r := newRequest(prompt, maxNew, ignoreEOS, false, c.e.cfg.PageSize, uint64(len(prompt))<<32|uint64(prompt[0]))
	o := &outcome{submitted: time.Since(c.t0), done: make(chan struct{})}
	c.e.submit(r)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(o.done)
		self := false
		for {
			_, n, p := r.take()
			if n == 0 && !p.done {
				<-r.notify
				continue
			}
			if n > 0 {
				o.chunks = append(o.chunks, chunkAt{time.Since(c.t0), n})
				time.Sleep(c.delay)
			}
			if p.done {
				o.p = p
				return
			}
			if c.e.lockstep && !self {
				self = c.e.selfStep(r)
			}
		}
	}()
	return o
}

func ms_(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

func TestEngineTimelineOfOneRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := startEngine(t, testConfig())
		c := newClient(e)
		o := c.send(ids(100, 1), 4, true)
		c.wg.Wait()
		// Prefill: 10 ms + 100 tokens at 1000/s = 110 ms; then one decode
		// step of 5 + 1 ms per remaining token.
		want := []chunkAt{{ms_(110), 1}, {ms_(116), 1}, {ms_(122), 1}, {ms_(128), 1}}
		if !equalChunks(o.chunks, want) {
			t.Errorf("chunks %v, want %v", o.chunks, want)
		}
		if o.p.reason != finLength || o.p.avail != 4 || o.p.verify != 3 || o.p.cached != 0 {
			t.Errorf("progress %+v", o.p)
		}
		if got := o.p.prefillEnd.Sub(o.p.prefillStart); got != ms_(110) {
			t.Errorf("prefill took %v, want 110ms", got)
		}
	})
}

func equalChunks(a, b []chunkAt) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEngineQueuesWhenBatchIsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxRunningRequests = 2
		e, run := heldEngine(t, cfg)
		c := newClient(e)
		a := c.send(ids(10, 1), 3, true)
		b := c.send(ids(10, 2), 5, true)
		q := c.send(ids(10, 3), 1, true)
		run()
		time.Sleep(ms_(35)) // after the first prefill step (30 ms)
		synctest.Wait()
		if got := e.stats.waiting.Load(); got != 1 {
			t.Errorf("waiting = %d while two run, want 1", got)
		}
		c.wg.Wait()
		// a and b share one prefill step (10 + 20 ms); q waits for a to end.
		if a.chunks[0].at != ms_(30) || b.chunks[0].at != ms_(30) {
			t.Errorf("first chunks at %v and %v, want 30ms", a.chunks[0].at, b.chunks[0].at)
		}
		aEnd := a.chunks[len(a.chunks)-1].at
		if got := q.p.prefillStart.Sub(c.t0); got != aEnd {
			t.Errorf("queued request's prefill started at %v, want when the first one ended (%v)", got, aEnd)
		}
		if q.ttft() <= a.ttft() {
			t.Errorf("queued TTFT %v not above %v", q.ttft(), a.ttft())
		}
	})
}

func TestEngineQueuesWhenKVIsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.KVTokens = 30 // one request of 10 + 10 fits, two do not
		e := startEngine(t, cfg)
		c := newClient(e)
		a := c.send(ids(10, 1), 10, true)
		b := c.send(ids(10, 2), 10, true)
		c.wg.Wait()
		aEnd := a.chunks[len(a.chunks)-1].at
		if got := b.p.prefillStart.Sub(c.t0); got != aEnd {
			t.Errorf("second prefill started at %v, want %v (after the first freed its KV)", got, aEnd)
		}
	})
}

func TestEngineTTFTGrowsWithLoad(t *testing.T) {
	var prev time.Duration
	for _, n := range []int{1, 4, 16, 64} {
		synctest.Test(t, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxPrefillTokens = 256 // a prefill step takes at most two prompts
			e, run := heldEngine(t, cfg)
			c := newClient(e)
			var outs []*outcome
			for i := range n {
				outs = append(outs, c.send(ids(128, i+1), 8, true))
			}
			run()
			c.wg.Wait()
			var sum time.Duration
			for _, o := range outs {
				sum += o.ttft()
			}
			mean := sum / time.Duration(n)
			if mean <= prev {
				t.Errorf("%d simultaneous requests: mean TTFT %v, not above %v at lower load", n, mean, prev)
			}
			prev = mean
		})
	}
}

func TestEngineThroughputSaturates(t *testing.T) {
	// Closed loop: conc clients each send a request as soon as the last
	// ends. Output tokens per second grow with concurrency until the batch
	// cap (64) holds the batch at 64; the ITL grows with the batch.
	const window = 20 * time.Second
	tput := map[int]float64{}
	itl := map[int]time.Duration{}
	for _, conc := range []int{1, 8, 64, 256} {
		synctest.Test(t, func(t *testing.T) {
			cfg := testConfig()
			cfg.DecodePerRequest = 100 * time.Microsecond
			e := startEngine(t, cfg)
			c := newClient(e)
			var mu sync.Mutex
			tokens := 0
			var gaps []time.Duration
			var wg sync.WaitGroup
			for i := range conc {
				wg.Go(func() {
					for k := 0; ; k++ {
						o := c.send(ids(16, i*100000+k+1), 64, true)
						<-o.done
						mu.Lock()
						for j, ch := range o.chunks {
							if ch.at <= window {
								tokens += ch.n
							}
							if j > 0 && ch.at > window/2 && ch.at <= window {
								gaps = append(gaps, ch.at-o.chunks[j-1].at)
							}
						}
						mu.Unlock()
						if time.Since(c.t0) > window {
							return
						}
					}
				})
			}
			wg.Wait()
			tput[conc] = float64(tokens) / window.Seconds()
			itl[conc] = median(gaps)
		})
	}
	t.Logf("tokens/s by concurrency %v; median ITL %v", tput, itl)
	if !(tput[1] < tput[8] && tput[8] < tput[64]) {
		t.Errorf("throughput does not grow below the batch cap: %v", tput)
	}
	if r := tput[256] / tput[64]; r < 0.9 || r > 1.1 {
		t.Errorf("throughput at 256 clients is %.0f/s, at 64 %.0f/s: not saturated (ratio %.2f)", tput[256], tput[64], r)
	}
	// The decode-only bound: 64 tokens per (5 + 64×0.1) ms step.
	if bound := 64 / (5e-3 + 64*0.1e-3); tput[256] > bound {
		t.Errorf("throughput %.0f/s above the decode bound %.0f/s", tput[256], bound)
	}
	if !(itl[1] < itl[8] && itl[8] < itl[64]) {
		t.Errorf("median ITL does not grow with the batch: %v", itl)
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func TestEngineCacheHitShortensTTFT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := startEngine(t, testConfig()) // page size 4
		c := newClient(e)
		prompt := ids(102, 7)
		first := c.send(prompt, 2, true)
		c.wg.Wait()
		second := c.send(prompt, 2, true)
		c.wg.Wait()
		// Another prompt sharing the first 50 tokens hits 48 (whole pages).
		third := c.send(append(append([]int(nil), prompt[:50]...), ids(52, 9)...), 2, true)
		c.wg.Wait()
		if first.p.cached != 0 {
			t.Errorf("first request cached %d tokens", first.p.cached)
		}
		// 102 tokens: 25 full pages, but the last prompt token is always
		// computed, so (102−1)/4×4 = 100 are cached.
		if second.p.cached != 100 {
			t.Errorf("repeat cached %d tokens, want 100", second.p.cached)
		}
		if got, want := second.ttft(), ms_(10+2); got != want {
			t.Errorf("repeat TTFT %v, want %v (prefill of 2 uncached tokens)", got, want)
		}
		if got := first.ttft() - second.ttft(); got != ms_(100) {
			t.Errorf("cache hit saved %v, want 100ms", got)
		}
		if third.p.cached != 48 {
			t.Errorf("shared prefix cached %d tokens, want 48", third.p.cached)
		}
		if e.stats.cachedTokens.Load() != 148 || e.stats.promptTokens.Load() != 306 {
			t.Errorf("counters cached %d prompt %d", e.stats.cachedTokens.Load(), e.stats.promptTokens.Load())
		}
	})
}

func TestEngineFlushEmptiesCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := startEngine(t, testConfig())
		c := newClient(e)
		prompt := ids(40, 3)
		c.send(prompt, 1, true)
		c.wg.Wait()
		if !e.flush(true) {
			t.Fatal("flush of an idle engine failed")
		}
		o := c.send(prompt, 1, true)
		c.wg.Wait()
		if o.p.cached != 0 {
			t.Errorf("cached %d tokens after a flush", o.p.cached)
		}
		// A flush that requires idleness fails while a request runs.
		c.send(ids(40, 4), 50, true)
		synctest.Wait()
		if e.flush(true) {
			t.Error("flush succeeded while a request was running")
		}
		if !e.flush(false) {
			t.Error("unconditional flush failed")
		}
		c.wg.Wait()
	})
}

func TestEngineCacheEvictsLRUUnderKVPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.KVTokens = 100
		e := startEngine(t, cfg)
		c := newClient(e)
		old := ids(40, 1)
		c.send(old, 1, true)
		c.wg.Wait()
		c.send(ids(40, 2), 1, true)
		c.wg.Wait()
		// A 90-token request leaves room for at most 10 cached tokens.
		c.send(ids(80, 3), 10, true)
		time.Sleep(ms_(95)) // past its prefill (10 + 80 ms)
		synctest.Wait()
		if got := e.stats.cacheTokens.Load() + e.stats.usedKV.Load(); got > 100 {
			t.Errorf("cache + running = %d tokens, over the pool of 100", got)
		}
		c.wg.Wait()
		o := c.send(old, 1, true)
		c.wg.Wait()
		if o.p.cached != 0 {
			t.Errorf("the oldest prompt still cached %d tokens", o.p.cached)
		}
	})
}

func TestEngineSpeculativeDecoding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.SpeculativeAcceptLength = 3
		e, run := heldEngine(t, cfg) // one admission order: the draws repeat
		c := newClient(e)
		var outs []*outcome
		for i := range 50 {
			outs = append(outs, c.send(ids(8, i+1), 400, true))
		}
		run()
		c.wg.Wait()
		multi := 0
		for _, o := range outs {
			if o.tokens() != 400 || o.p.avail != 400 {
				t.Fatalf("got %d tokens (avail %d), want 400", o.tokens(), o.p.avail)
			}
			for _, ch := range o.chunks {
				if ch.n > 1 {
					multi++
				}
			}
			// One chunk per step: the prefill's token, then one per verify step.
			if len(o.chunks) != o.p.verify+1 {
				t.Errorf("%d chunks for %d verify steps", len(o.chunks), o.p.verify)
			}
		}
		if multi == 0 {
			t.Error("no chunk carried several tokens")
		}
		mean := float64(e.stats.specTokens.Load()) / float64(e.stats.specSteps.Load())
		if math.Abs(mean-3) > 0.05 {
			t.Errorf("mean tokens per step %.3f, want 3", mean)
		}
	})
}

func TestSpecDistMean(t *testing.T) {
	for _, x := range []float64{1.2, 1.5, 2, 2.7, 3.5, 5} {
		d := newSpecDist(x)
		if got := chainMean(d.k, d.q); math.Abs(got-x) > 1e-9 {
			t.Errorf("x=%v: k=%d q=%v gives mean %v", x, d.k, d.q, got)
		}
		if d.k < 1 || d.q <= 0 || d.q >= 1 {
			t.Errorf("x=%v: k=%d q=%v out of range", x, d.k, d.q)
		}
	}
	if newSpecDist(1).on() || newSpecDist(0).on() {
		t.Error("accept length 1 or 0 should turn speculation off")
	}
}

func TestEngineEarlyEOS(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.EOSProbability = 0.05
		e, run := heldEngine(t, cfg) // one admission order: the draws repeat
		c := newClient(e)
		var free, forced []*outcome
		for i := range 400 {
			free = append(free, c.send(ids(8, i+1), 1000, false))
		}
		for i := range 20 {
			forced = append(forced, c.send(ids(8, 1000+i), 50, true))
		}
		run()
		c.wg.Wait()
		sum, stops := 0, 0
		for _, o := range free {
			sum += o.p.avail
			if o.p.reason == finStop {
				stops++
				if o.p.avail >= 1000 {
					t.Errorf("stopped at %d tokens, the limit", o.p.avail)
				}
			}
		}
		if stops != len(free) {
			t.Errorf("%d of %d stopped early; with p=0.05 all should", stops, len(free))
		}
		// Geometric with mean 1/p = 20 tokens; 400 draws.
		if mean := float64(sum) / float64(len(free)); mean < 17 || mean > 23 {
			t.Errorf("mean length %.1f, want about 20", mean)
		}
		for _, o := range forced {
			if o.p.avail != 50 || o.p.reason != finLength {
				t.Errorf("ignore_eos: %d tokens, %s", o.p.avail, o.p.reason)
			}
		}
	})
}

func TestEngineStepsFollowAnAbsoluteSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Every wait wakes 1 ms late, as a coarse timer would. Relative
		// sleeps would drift by 1 ms a step; the absolute schedule keeps
		// each step's end on the model's grid, so each chunk is 1 ms late
		// at most and the gaps stay 6 ms.
		cfg := testConfig()
		e := newEngine(cfg, nil, func(ctx context.Context, t time.Time) bool {
			return sleepUntil(ctx, t.Add(time.Millisecond))
		})
		ctx, cancel := context.WithCancel(context.Background())
		go e.run(ctx)
		defer func() { cancel(); <-e.stopped }()
		c := newClient(e)
		o := c.send(ids(10, 1), 50, true)
		c.wg.Wait()
		for i, ch := range o.chunks {
			want := ms_(20 + 6*float64(i))
			if ch.at != want+time.Millisecond {
				t.Fatalf("chunk %d at %v, want %v (+1ms late wake)", i, ch.at, want)
			}
		}
	})
}

func TestEnginePrefillPausesDecode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := startEngine(t, testConfig())
		c := newClient(e)
		a := c.send(ids(10, 1), 20, true)
		time.Sleep(ms_(40))
		c.send(ids(100, 2), 2, true) // its prefill takes 110 ms
		c.wg.Wait()
		longest := time.Duration(0)
		for i := 1; i < len(a.chunks); i++ {
			longest = max(longest, a.chunks[i].at-a.chunks[i-1].at)
		}
		if longest < ms_(110) {
			t.Errorf("longest gap of the running request %v: the other's prefill should have paused it", longest)
		}
	})
}

func TestEngineSlowWriterGetsCoalescedChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := startEngine(t, testConfig()) // 6 ms steps
		c := newClient(e)
		c.delay = ms_(15) // the writer is slower than the engine
		o := c.send(ids(10, 1), 30, true)
		c.wg.Wait()
		if o.tokens() != 30 {
			t.Fatalf("%d tokens, want 30", o.tokens())
		}
		if len(o.chunks) >= 30 {
			t.Errorf("%d chunks: a slow writer should take several tokens at once", len(o.chunks))
		}
	})
}

func TestEngineLockstepOneTokenPerChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, _ := Preset(PresetInstant)
		cfg.EOSProbability = 0
		e := startEngine(t, cfg)
		c := newClient(e)
		c.delay = time.Millisecond
		var outs []*outcome
		for i := range 8 {
			outs = append(outs, c.send(ids(10, i+1), 25, true))
		}
		c.wg.Wait()
		for _, o := range outs {
			if len(o.chunks) != 25 || o.tokens() != 25 {
				t.Errorf("%d chunks for %d tokens, want 25 of one", len(o.chunks), o.tokens())
			}
		}
		if e.stats.genTokens.Load() != 200 {
			t.Errorf("generated %d tokens, want 200", e.stats.genTokens.Load())
		}
		synctest.Wait()
		if e.stats.running.Load() != 0 || e.stats.usedKV.Load() != 0 {
			t.Errorf("running %d, KV %d after all ended", e.stats.running.Load(), e.stats.usedKV.Load())
		}
	})
}

func TestEngineAbortFreesItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxRunningRequests = 1
		e := startEngine(t, cfg)
		r := newRequest(ids(10, 1), 1000, true, false, cfg.PageSize, 1)
		e.submit(r)
		c := newClient(e)
		q := c.send(ids(10, 2), 1, true)
		time.Sleep(ms_(100))
		e.abort(r)
		c.wg.Wait()
		_, _, p := r.take()
		if !p.done || p.reason != finAbort {
			t.Errorf("aborted request: %+v", p)
		}
		if q.p.reason != finLength {
			t.Errorf("queued request did not run after the abort: %+v", q.p)
		}
	})
}

func TestEngineShutdownEndsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(testConfig(), nil, sleepUntil)
		ctx, cancel := context.WithCancel(context.Background())
		go e.run(ctx)
		c := newClient(e)
		a := c.send(ids(10, 1), 1000, true)
		time.Sleep(ms_(50))
		cancel()
		c.wg.Wait()
		<-e.stopped
		if a.p.reason != finAbort {
			t.Errorf("running request ended %s, want abort", a.p.reason)
		}
		late := c.send(ids(10, 2), 5, true)
		c.wg.Wait()
		if late.p.reason != finAbort {
			t.Errorf("request after shutdown ended %s, want abort", late.p.reason)
		}
	})
}
