package metrics

import "slices"

// Consistency is --consistency-probes' outcome: fixed prompts sent at
// temperature 0 on the idle server and again under the run's load, their
// replies compared (docs/metrics.md, "Consistency under load").
type Consistency struct {
	// Planned is the probes asked for; Compared those whose two replies
	// both succeeded, Diverged those of them whose replies differ.
	Planned, Compared, Diverged int
	// FirstDiff holds, per divergent probe, the index of the first token
	// that differs (in the client's tokenization of the two texts).
	FirstDiff []int
	// Pairs are the first divergent pairs, for --output-details.
	Pairs []ProbePair
	// LoadInput and LoadOutput are the prompt and output tokens of the
	// probes sent during the run, which the server's counts include.
	LoadInput, LoadOutput int
}

// ProbePair is one divergent probe: its dataset row, the token where the
// replies part, and the two texts.
type ProbePair struct {
	Row, FirstDiff int
	Idle, Loaded   string
}

// MaxProbePairs is how many divergent pairs a result keeps.
const MaxProbePairs = 3

// Rate is the share of compared probes that diverged (0 of none).
func (c *Consistency) Rate() float64 {
	if c.Compared == 0 {
		return 0
	}
	return float64(c.Diverged) / float64(c.Compared)
}

// FirstDiffMedian and FirstDiffMin summarize FirstDiff; ok is false when
// no probe diverged.
func (c *Consistency) FirstDiffMedian() (float64, bool) {
	if len(c.FirstDiff) == 0 {
		return 0, false
	}
	s := slices.Clone(c.FirstDiff)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2]), true
	}
	return float64(s[n/2-1]+s[n/2]) / 2, true
}

func (c *Consistency) FirstDiffMin() (int, bool) {
	if len(c.FirstDiff) == 0 {
		return 0, false
	}
	return slices.Min(c.FirstDiff), true
}

// FirstDifference is the index of the first element where a and b differ
// (the shorter's length when one is a prefix of the other), and false when
// they are equal.
func FirstDifference[T comparable](a, b []T) (int, bool) {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i, true
		}
	}
	return n, len(a) != len(b)
}
