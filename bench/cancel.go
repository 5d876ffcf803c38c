package bench

import (
	"math"
	"time"
)

// cancelling is AIPerf's cancellation injection (--request-cancellation-rate
// and --request-cancellation-delay): the requests it picks are closed by the
// client when their reply has not ended delay after they were written.
type cancelling struct {
	pct   float64 // 0: none
	delay time.Duration
	seed  uint64
}

// parseCancel checks the two flags before any network call.
func parseCancel(cfg *Config) (cancelling, error) {
	var c cancelling
	if cfg.RequestCancellationRate == nil {
		if cfg.RequestCancellationDelay != nil {
			return c, usage("--request-cancellation-delay: needs --request-cancellation-rate")
		}
		return c, nil
	}
	p := *cfg.RequestCancellationRate
	if math.IsNaN(p) || p < 0 || p > 100 {
		return c, usage("--request-cancellation-rate: must be a percentage from 0 to 100, got %s", fmtFloat(p))
	}
	c.pct, c.seed = p, uint64(cfg.Seed)
	if d := cfg.RequestCancellationDelay; d != nil {
		if math.IsNaN(*d) || math.IsInf(*d, 0) || *d < 0 {
			return c, usage("--request-cancellation-delay: must be a number of seconds >= 0, got %s", fmtFloat(*d))
		}
		c.delay = time.Duration(*d * float64(time.Second))
	}
	return c, nil
}

// picks reports whether the request at position seq of the whole plan
// (every shard's) is cancelled: a draw seeded by --seed and the position
// alone, so that shards and reruns pick the same requests.
func (c cancelling) picks(seq int) bool {
	return c.pct > 0 && cancelDraw(c.seed, seq) < c.pct/100
}

// cancelDraw is a uniform draw in [0, 1) for position seq under seed
// (SplitMix64 of the two).
func cancelDraw(seed uint64, seq int) float64 {
	z := seed*0x9e3779b97f4a7c15 ^ uint64(seq)
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
