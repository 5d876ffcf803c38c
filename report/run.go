// Package report prints the reference tool's console block and writes its
// JSONL result line, byte for byte (spec §6 and §7), and appends that line to
// the result file.
package report

import (
	"strconv"
	"strings"
	"time"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

// Run is what the console block and the result line need besides the
// summary: the flags they echo and the server's /server_info body.
type Run struct {
	// Sketch, in a soak, is the percentiles' worst-case relative error
	// (they come from sketches); 0 when they are exact.
	Sketch float64

	Backend     string
	DatasetName string
	// Images: the dataset's rows carry images, so the block shows the
	// vision-token total.
	Images bool
	// Embedding: the backend measures embeddings, so the block has no
	// token, TTFT, TPOT or ITL lines.
	Embedding bool
	// RerankDocs is --rerank-docs: each request scored that many
	// documents, so the block adds the document throughput (0: none).
	RerankDocs int

	// RequestRate is --request-rate (+Inf for a burst). With Trace
	// (--use-trace-timestamps) the rate is shown as "trace" instead.
	RequestRate float64
	Trace       bool

	MaxConcurrency    *int
	Tag               *string
	SharegptOutputLen *int
	RandomInputLen    int
	RandomOutputLen   int
	RandomRangeRatio  float64

	// ServerInfo is the raw body of GET /server_info when it answered 200,
	// nil otherwise (written as null).
	ServerInfo []byte

	CacheReport   bool
	OutputDetails bool

	// Goodput is set with --goodput: the block prints it after the request
	// throughput, where vLLM prints it.
	Goodput *metrics.Goodput
	// GoodputSLO is --goodput's bounds.
	GoodputSLO metrics.SLO
	// PercentileMetrics and Percentiles are --percentile-metrics and
	// --metric-percentiles when either was given: the block and the line
	// add those percentiles (the summary's Stats.More).
	PercentileMetrics []string
	Percentiles       []float64
	// RateLabel, when set, is shown for "Traffic request rate:" (a ramp).
	RateLabel string
	// Reasoning is set for chat-like backends: TTFO and the reasoning and
	// content token counts.
	Reasoning *metrics.Reasoning
	// PerToken is the per-token ITL, where the server said how many
	// tokens each chunk carried.
	PerToken *metrics.PerTokenITL

	// Extra holds keys of our own, written after every reference key
	// (details included). They must not repeat a reference key.
	Extra *pyjson.Object
}

func (r Run) embedding() bool { return r.Embedding }

// NameParams are what the automatic result file name is built from.
type NameParams struct {
	Backend    string
	NumPrompts int
	// Dataset is the dataset's part: its name, or the lengths (and images)
	// of a generated one (dataset.FileTag).
	Dataset string
}

// FileName is the result file the reference tool picks when --output-file is
// not given; MMDD is now's month and day in local time.
func FileName(run NameParams, now time.Time) string {
	var b strings.Builder
	b.WriteString(run.Backend)
	b.WriteByte('_')
	b.WriteString(now.Local().Format("0102"))
	b.WriteByte('_')
	b.WriteString(strconv.Itoa(run.NumPrompts))
	b.WriteByte('_')
	b.WriteString(run.Dataset)
	b.WriteString(".jsonl")
	return b.String()
}

// docThroughput is documents scored per second: every successful rerank
// request scored RerankDocs of them.
func (r Run) docThroughput(s metrics.Summary) float64 {
	return s.RequestThroughput * float64(r.RerankDocs)
}
