// Package bench runs one benchmark: plan (rows and schedule), dispatch,
// records, summary, report.
package bench

import "benchserve/dataset"

// Config is everything a run needs, one field per flag of the reference
// tool (spec §9.2). Pointers and nil slices stand for Python's None.
type Config struct {
	// Target
	Backend              string // --backend: a name of backend.Names()
	BaseURL              *string
	Host                 string
	Port                 *int
	ReadyCheckTimeoutSec int
	Header               []string // "Key=Value" items
	Model                *string
	ServedModelName      *string
	Tokenizer            *string
	NoKeepalive          bool
	RequestTimeout       *float64 // seconds; nil: backend.DefaultTimeout
	ConnectTimeout       float64  // seconds; 0: none of its own
	CACert               *string
	Insecure             bool
	// HTTP2 speaks h2 over TLS (--http2), H2C cleartext h2 with prior
	// knowledge (--h2c); neither: HTTP/1.1.
	HTTP2 bool
	H2C   bool
	// Sim starts the built-in simulator and benchmarks it (package cli
	// starts it and sets BaseURL).
	Sim       bool
	SimPreset string
	// URLStrategy is --url-strategy: how requests spread over several
	// --base-url (URLRoundRobin, URLRandom).
	URLStrategy string

	// Dataset: the flags dataset.Params holds, promoted (--num-prompts is
	// NumPrompts, --seed Seed, --random-input-len RandomInputLen...). Its
	// Name, Path, Backend and Model are not flags here: the run fills them
	// in from DatasetName, DatasetPath, the backend's Spec and the resolved
	// model (datasetParams); Backend and Model above are --backend and
	// --model.
	DatasetName string
	DatasetPath string
	dataset.Params

	// Traffic
	RequestRate        float64 // +Inf for a burst
	Arrival            string  // poisson or constant
	Burstiness         float64 // gamma shape; 1 is Poisson
	UseTraceTimestamps bool
	MaxConcurrency     *int
	WarmupRequests     int
	FlushCache         bool
	FlushCacheTimeout  float64
	// Runs by time and ramps (ours; the ramp flags are vLLM's).
	Duration                *float64 // --duration: send for this many seconds
	WarmupDuration          *float64 // --warmup-duration
	RampUpStrategy          *string  // linear or exponential
	RampUpStartRPS          *float64
	RampUpEndRPS            *float64
	ConcurrencyRampDuration *float64 // the cap rises from 1 to --max-concurrency
	// One plan split across processes (ours): --shard I/N sends the
	// plan's slots i with i mod N == I, from the common --start-at (Unix
	// seconds; --start-in: seconds from now).
	Shard   *string
	StartAt *float64
	StartIn *float64
	// AIPerf's cancellation injection: the percentage of requests the
	// client cancels, and the seconds after each is written (nil: 0).
	RequestCancellationRate  *float64
	RequestCancellationDelay *float64
	// Think time before each turn after the first of a conversation
	// (ours): "0", fixed:MS, exp:MS, normal:MS,SD or trace (the session
	// trace's recorded delays; "" or auto: those for a session trace, else
	// 0), times the scale, capped at the cap (seconds; nil: none).
	ThinkTime      string
	ThinkTimeScale float64
	ThinkTimeCap   *float64
	// MaxSessions caps the conversations under way at once; with it,
	// --max-concurrency caps requests in flight, a conversation taking a
	// slot per turn and none while it thinks.
	MaxSessions *int

	// SLOs (vLLM's --goodput and percentile flags; --threshold is ours)
	Goodput           []string // KEY:MS items; nil: off
	PercentileMetrics *string
	MetricPercentiles *string
	Threshold         []string // KEY OP NUMBER expressions

	// Request content
	ContinuousUsageStats bool // ours: usage in every chunk, for the per-token ITL
	DisableStream        bool
	DisableIgnoreEOS     bool
	Temperature          float64
	TopP                 float64
	ReturnLogprob        bool
	TopLogprobsNum       int
	TokenIDsLogprob      []int
	LogprobStartLen      int
	ReturnRoutedExperts  bool
	ExtraRequestBody     *string
	LoraName             []string // nil: flag not given
	LoraDistribution     string
	LoraZipfAlpha        float64
	FakePrefill          bool

	// Output
	OutputFile     *string
	OutputDetails  bool
	PrintRequests  bool
	DisableTqdm    bool
	PlotThroughput bool
	CacheReport    bool
	Tag            *string
	RecordFile     *string // ours: one JSON line per request as it ends
	// ConsistencyProbes is --consistency-probes: rows sent at temperature
	// 0 on the idle server and again under load, replies compared.
	ConsistencyProbes int
	// SGLang's steady_state_serving: the window's ratio of the peak in
	// flight (nil: off) and the file its line is appended to.
	SteadyStateRatio *float64
	// Soak keeps no records in memory: percentiles from sketches
	// (--soak; a --duration over 30 minutes implies it).
	Soak                  bool
	SteadyStateOutputFile *string

	// The server's side (ours): Prometheus /metrics read during the run.
	ServerMetricsInterval float64 // seconds between reads
	NoServerMetrics       bool
	ServerMetricsURL      *string // default: the server's /metrics
	ServerMetricsFile     *string // the reads' time series, one JSON line each
	// MetricsAddr is where the client's own metrics are served while the
	// run lasts (--metrics-addr; app/cli serves them, bench only tells).
	MetricsAddr *string

	// The plan file (ours): --save-plan writes every request's offset and
	// bytes before sending; --replay-plan sends a saved plan's instead of
	// a dataset's.
	SavePlan   *string
	ReplayPlan *string

	// Profiling
	Profile           bool
	ProfileActivities []string
	ProfileStartStep  *int
	ProfileSteps      *int
	ProfileNumSteps   *int
	ProfileByStage    bool
	ProfileStages     []string
	ProfileOutputDir  *string
	ProfilePrefix     *string
	PDSeparated       bool
	ProfilePrefillURL []string
	ProfileDecodeURL  []string
}
