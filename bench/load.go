package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"benchserve/report"
	"benchserve/schedule"
)

// traffic is how a run is driven beyond the reference's flags: by time
// (--duration, --warmup-duration) and on ramps.
type traffic struct {
	duration time.Duration // 0: a run by count
	warmup   time.Duration // 0: --warmup-requests
	ramp     *schedule.Ramp
	capRamp  time.Duration // --concurrency-ramp-duration
	// shard of shards (0 shards: the whole plan); startAt, when set, is
	// the measured run's common start on the wall clock.
	shard, shards int
	startAt       time.Time
	// cancel picks the requests cancelled on purpose.
	cancel cancelling
	// think is the delay before a conversation's later turns.
	think thinkTime
	// soak: the run keeps no records, only their fold (--soak, or a
	// --duration past SoakAfter).
	soak bool
}

// mine reports whether slot i is this process's: every slot without
// --shard, else those with i mod N == I.
func (t *traffic) mine(i int) bool { return t.shards == 0 || i%t.shards == t.shard }

// parseLoad checks the load flags before any network call, with vLLM's
// rules for its ramp flags.
func parseLoad(cfg *Config) (traffic, error) {
	var ld traffic
	var err error
	if ld.duration, err = secondsFlag("--duration", cfg.Duration); err != nil {
		return ld, err
	}
	if ld.warmup, err = secondsFlag("--warmup-duration", cfg.WarmupDuration); err != nil {
		return ld, err
	}
	timed := datasetSpec(cfg.DatasetName).Timed
	if cfg.RampUpStrategy != nil {
		if timed {
			return ld, usage("--ramp-up-strategy: the %s dataset sends each request at its trace time", cfg.DatasetName)
		}
		if !math.IsInf(cfg.RequestRate, 1) {
			return ld, usage("--ramp-up-strategy: the ramp sets the request rate; remove --request-rate %s", fmtFloat(cfg.RequestRate))
		}
		if cfg.RampUpStartRPS == nil || cfg.RampUpEndRPS == nil {
			return ld, usage("--ramp-up-strategy: give both --ramp-up-start-rps and --ramp-up-end-rps")
		}
		r := schedule.Ramp{Strategy: *cfg.RampUpStrategy, Start: *cfg.RampUpStartRPS, End: *cfg.RampUpEndRPS}
		if err := schedule.CheckRamp(r); err != nil {
			return ld, usage("%v", err)
		}
		ld.ramp = &r
	} else if cfg.RampUpStartRPS != nil || cfg.RampUpEndRPS != nil {
		return ld, usage("--ramp-up-start-rps and --ramp-up-end-rps need --ramp-up-strategy linear or exponential")
	}
	if ld.capRamp, err = secondsFlag("--concurrency-ramp-duration", cfg.ConcurrencyRampDuration); err != nil {
		return ld, err
	}
	if ld.capRamp > 0 && (cfg.MaxConcurrency == nil || *cfg.MaxConcurrency <= 0) {
		return ld, usage("--concurrency-ramp-duration: the cap rises from 1 to --max-concurrency; give --max-concurrency")
	}
	closed := math.IsInf(cfg.RequestRate, 1) && ld.ramp == nil && !timed
	noCap := cfg.MaxConcurrency == nil || *cfg.MaxConcurrency <= 0
	if closed && noCap {
		if ld.duration > 0 {
			return ld, usage("--duration: with --request-rate inf every request leaves at once; give --max-concurrency (a closed loop of that many requests in flight) or a finite --request-rate")
		}
		if ld.warmup > 0 {
			return ld, usage("--warmup-duration: with --request-rate inf every request leaves at once; give --max-concurrency or a finite --request-rate")
		}
	}
	if cfg.Shard != nil {
		i, n, err := parseShard(*cfg.Shard)
		if err != nil {
			return ld, err
		}
		ld.shard, ld.shards = i, n
	}
	switch {
	case cfg.StartAt != nil && cfg.StartIn != nil:
		return ld, usage("--start-at and --start-in: give one of them")
	case cfg.StartAt != nil:
		if math.IsNaN(*cfg.StartAt) || math.IsInf(*cfg.StartAt, 0) || *cfg.StartAt <= 0 {
			return ld, usage("--start-at: must be a Unix time in seconds, got %s", fmtFloat(*cfg.StartAt))
		}
		sec, frac := math.Modf(*cfg.StartAt)
		ld.startAt = time.Unix(int64(sec), int64(frac*1e9))
		if err := checkStartAt(*cfg.StartAt, ld.startAt, time.Now()); err != nil {
			return ld, err
		}
	case cfg.StartIn != nil:
		d, err := secondsFlag("--start-in", cfg.StartIn)
		if err != nil {
			return ld, err
		}
		ld.startAt = time.Now().Add(d)
	}
	if ld.warmup > 0 && cfg.WarmupRequests != 1 {
		return ld, usage("--warmup-duration and --warmup-requests %d: give one of them", cfg.WarmupRequests)
	}
	if ld.cancel, err = parseCancel(cfg); err != nil {
		return ld, err
	}
	if ld.think, err = parseThink(cfg); err != nil {
		return ld, err
	}
	ld.soak = cfg.Soak || ld.duration > SoakAfter
	if n := cfg.MaxSessions; n != nil && *n < 1 {
		return ld, usage("--max-sessions %d: give how many conversations may be under way at once, >= 1", *n)
	}
	return ld, nil
}

// parseShard parses --shard I/N: 0 <= I < N.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, usage("--shard %q: expected I/N with 0 <= I < N (e.g. 0/4 ... 3/4; a Kubernetes Indexed Job's $JOB_COMPLETION_INDEX is I)", s)
	}
	return i, n, nil
}

// secondsFlag is a flag of seconds: nil is none, else finite and > 0.
func secondsFlag(flag string, v *float64) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) || *v <= 0 {
		return 0, usage("%s: must be a number of seconds > 0, got %s", flag, fmtFloat(*v))
	}
	return time.Duration(*v * float64(time.Second)), nil
}

func fmtFloat(v float64) string { return fmt.Sprint(v) }

// report is the load as the result shows it; the ramp's length is known
// once the schedule is planned (over).
func (ld traffic) report(cfg *Config) report.Load {
	l := report.Load{Duration: ld.duration.Seconds(), WarmupDuration: ld.warmup.Seconds(), ConcurrencyRampOver: ld.capRamp.Seconds()}
	if r := ld.ramp; r != nil {
		l.Ramp, l.RampStart, l.RampEnd, l.RampOver = r.Strategy, r.Start, r.End, r.Over.Seconds()
	}
	return l
}
