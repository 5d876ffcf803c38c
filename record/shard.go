package record

import (
	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
)

// Header opens a shard's record file with what benchserve merge needs to
// rebuild the whole run: the shard, the common start, and the settings the
// result echoes.
type Header struct {
	Shard             string  // "I/N"
	StartAt           float64 // the common --start-at, Unix seconds (0: none)
	Seed              int
	PlannedSlots      int
	PlannedRequests   int // the whole plan's requests, each round counted (0: not known, a closed loop by time)
	Backend           string
	DatasetName       string
	RequestRate       float64 // +Inf: all at once
	MaxConcurrency    *int
	SharegptOutputLen *int
	RandomInputLen    int
	RandomOutputLen   int
	RandomRangeRatio  float64
	Tag               *string
	// URLs are the run's --base-url items, credentials redacted, when it
	// has several (nil with one): merge's per_url names them.
	URLs []string
}

func (h *Header) object() *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("shard", pyjson.String(h.Shard))
	if h.StartAt != 0 {
		o.Set("start_at_unix", pyjson.Float(h.StartAt))
	}
	o.Set("seed", pyjson.Int(h.Seed))
	o.Set("planned_slots", pyjson.Int(h.PlannedSlots))
	if h.PlannedRequests > 0 {
		o.Set("planned_requests", pyjson.Int(h.PlannedRequests))
	}
	o.Set("backend", pyjson.String(h.Backend))
	o.Set("dataset_name", pyjson.String(h.DatasetName))
	o.Set("request_rate", pyjson.Float(h.RequestRate))
	if h.MaxConcurrency != nil {
		o.Set("max_concurrency", pyjson.Int(*h.MaxConcurrency))
	}
	if h.SharegptOutputLen != nil {
		o.Set("sharegpt_output_len", pyjson.Int(*h.SharegptOutputLen))
	}
	o.Set("random_input_len", pyjson.Int(h.RandomInputLen))
	o.Set("random_output_len", pyjson.Int(h.RandomOutputLen))
	o.Set("random_range_ratio", pyjson.Float(h.RandomRangeRatio))
	if h.Tag != nil {
		o.Set("tag", pyjson.String(*h.Tag))
	}
	if len(h.URLs) > 1 {
		o.Set("urls", pyjson.Strings(h.URLs))
	}
	return o
}

// End closes a shard's record file: when the shard's run really started,
// how long it ran, how many records it wrote. Merge waits for it.
type End struct {
	Start       float64 // benchmark_start_unix
	Duration    float64 // seconds
	Records     int
	Interrupted bool
	// Late is how many ms after the common start the shard was ready to
	// send (0: it was ready before and waited for it). Its schedule keeps
	// the common start, so its first requests left that late.
	Late float64
}

func (e *End) object() *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("shard_end", pyjson.Bool(true))
	o.Set("benchmark_start_unix", pyjson.Float(e.Start))
	o.Set("duration", pyjson.Float(e.Duration))
	o.Set("records", pyjson.Int(e.Records))
	o.Set("interrupted", pyjson.Bool(e.Interrupted))
	o.Set("late_ms", pyjson.Float(e.Late))
	return o
}

// decodeShardLine reads a line that is not a request's into a Header (h)
// or an End (e), whichever it is, and says which: a line that is neither
// is neither (a later version's line of its own).
func decodeShardLine(line []byte, h *Header, e *End) (isHeader, isEnd bool, err error) {
	var head Header
	var end End
	intp := func(v jsonscan.Value) *int { x, _ := v.Int(); n := int(x); return &n }
	_, err = jsonscan.ParseObject(line, func(k []byte, v jsonscan.Value) {
		f := func() float64 { x, _ := v.Float(); return x }
		i := func() int { x, _ := v.Int(); return int(x) }
		s := func() string { return string(v.AppendString(nil)) }
		switch {
		case jsonscan.KeyIs(k, "shard_end"):
			isEnd = v.Kind == jsonscan.True
		case jsonscan.KeyIs(k, "shard"):
			head.Shard = s()
		case jsonscan.KeyIs(k, "start_at_unix"):
			head.StartAt = f()
		case jsonscan.KeyIs(k, "seed"):
			head.Seed = i()
		case jsonscan.KeyIs(k, "planned_slots"):
			head.PlannedSlots = i()
		case jsonscan.KeyIs(k, "planned_requests"):
			head.PlannedRequests = i()
		case jsonscan.KeyIs(k, "backend"):
			head.Backend = s()
		case jsonscan.KeyIs(k, "dataset_name"):
			head.DatasetName = s()
		case jsonscan.KeyIs(k, "request_rate"):
			head.RequestRate = f()
		case jsonscan.KeyIs(k, "max_concurrency"):
			head.MaxConcurrency = intp(v)
		case jsonscan.KeyIs(k, "sharegpt_output_len"):
			head.SharegptOutputLen = intp(v)
		case jsonscan.KeyIs(k, "random_input_len"):
			head.RandomInputLen = i()
		case jsonscan.KeyIs(k, "random_output_len"):
			head.RandomOutputLen = i()
		case jsonscan.KeyIs(k, "random_range_ratio"):
			head.RandomRangeRatio = f()
		case jsonscan.KeyIs(k, "tag"):
			t := s()
			head.Tag = &t
		case jsonscan.KeyIs(k, "benchmark_start_unix"):
			end.Start = f()
		case jsonscan.KeyIs(k, "duration"):
			end.Duration = f()
		case jsonscan.KeyIs(k, "records"):
			end.Records = i()
		case jsonscan.KeyIs(k, "interrupted"):
			end.Interrupted = v.Kind == jsonscan.True
		case jsonscan.KeyIs(k, "late_ms"):
			end.Late = f()
		case jsonscan.KeyIs(k, "urls"):
			it := v.Elements()
			for e, ok := it.Next(); ok; e, ok = it.Next() {
				head.URLs = append(head.URLs, string(e.AppendString(nil)))
			}
		}
	})
	switch {
	case err != nil:
		return false, false, err
	case isEnd:
		*e = end
	case head.Shard != "":
		*h, isHeader = head, true
	}
	return isHeader, isEnd, nil
}
