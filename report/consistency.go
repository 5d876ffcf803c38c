package report

import (
	"fmt"
	"strconv"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

const consistencyTitle = "Consistency under load"

// consistencyRows are --consistency-probes' lines.
func consistencyRows(c *metrics.Consistency) []Row {
	rows := []Row{
		{"Probes compared:", fmt.Sprintf("%d of %d", c.Compared, c.Planned)},
		{"Probes diverged under load (%):", F(100 * c.Rate())},
	}
	med, ok := c.FirstDiffMedian()
	lo, _ := c.FirstDiffMin()
	if !ok {
		return append(rows, Row{"First divergent token (median, min):", "n/a"})
	}
	return append(rows, Row{"First divergent token (median, min):", F(med) + ", " + strconv.Itoa(lo)})
}

// consistencyKeys are the same as keys; with details, the first
// divergent pairs' texts.
func consistencyKeys(o *pyjson.Object, c *metrics.Consistency, details bool) {
	o.Set("consistency_probes", pyjson.Int(c.Planned))
	o.Set("consistency_probes_compared", pyjson.Int(c.Compared))
	o.Set("consistency_diverged", pyjson.Int(c.Diverged))
	o.Set("consistency_divergence_rate", pyjson.Float(c.Rate()))
	if med, ok := c.FirstDiffMedian(); ok {
		lo, _ := c.FirstDiffMin()
		o.Set("consistency_first_diff_median", pyjson.Float(med))
		o.Set("consistency_first_diff_min", pyjson.Int(lo))
	} else {
		o.Set("consistency_first_diff_median", pyjson.Null)
		o.Set("consistency_first_diff_min", pyjson.Null)
	}
	if !details {
		return
	}
	b := []byte{'['}
	for i, p := range c.Pairs {
		if i > 0 {
			b = append(b, ", "...)
		}
		e := &pyjson.Object{}
		e.Set("row", pyjson.Int(p.Row))
		e.Set("first_diff", pyjson.Int(p.FirstDiff))
		e.Set("idle", pyjson.String(p.Idle))
		e.Set("loaded", pyjson.String(p.Loaded))
		b = append(b, e.Bytes()...)
	}
	o.Set("consistency_divergent_pairs", append(b, ']'))
}
