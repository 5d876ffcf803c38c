// Package bench runs one benchmark: plan (rows and schedule), dispatch,
// records, summary, report.
package bench

// Config is everything a run needs, one field per flag of the reference
// tool (spec §9.2). Pointers and nil slices stand for Python's None.
type Config struct {
	// Target
	Backend              string
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
	// Sim starts the built-in simulator and benchmarks it (package cli
	// starts it and sets BaseURL).
	Sim       bool
	SimPreset string

	// Dataset
	DatasetName          string
	DatasetPath          string
	DatasetOffset        int
	AgenticMaxTurns      *int
	SpeedBenchCategory   *string
	SpeedBenchOutputLen  int
	NumPrompts           int
	SharegptOutputLen    *int
	SharegptContextLen   *int
	RandomInputLen       int
	RandomOutputLen      int
	RandomRangeRatio     float64
	ImageCount           int
	ImageResolution      string
	RandomImageCount     bool
	ImageFormat          string
	ImageContent         string
	ApplyChatTemplate    bool
	TokenizePrompt       bool
	PromptSuffix         string
	GSPNumGroups         int
	GSPPromptsPerGroup   int
	GSPSystemPromptLen   int
	GSPQuestionLen       int
	GSPOutputLen         int
	GSPRangeRatio        float64
	GSPFastPrepare       bool
	GSPSendRoutingKey    bool
	GSPOrdered           bool
	GSPNumTurns          int
	GSPGroupDistribution string
	GSPZipfAlpha         *float64
	MooncakeSlowdown     float64
	MooncakeNumRounds    int
	MooncakeWorkload     string

	// Traffic
	RequestRate        float64 // +Inf for a burst
	Arrival            string  // poisson or constant
	Burstiness         float64 // gamma shape; 1 is Poisson
	UseTraceTimestamps bool
	MaxConcurrency     *int
	WarmupRequests     int
	FlushCache         bool
	FlushCacheTimeout  float64
	Seed               int

	// Request content
	DisableStream       bool
	DisableIgnoreEOS    bool
	Temperature         float64
	TopP                float64
	ReturnLogprob       bool
	TopLogprobsNum      int
	TokenIDsLogprob     []int
	LogprobStartLen     int
	ReturnRoutedExperts bool
	ExtraRequestBody    *string
	LoraName            []string // nil: flag not given
	LoraDistribution    string
	LoraZipfAlpha       float64
	FakePrefill         bool

	// Output
	OutputFile     *string
	OutputDetails  bool
	PrintRequests  bool
	DisableTqdm    bool
	PlotThroughput bool
	CacheReport    bool
	Tag            *string
	RecordFile     *string // ours: one JSON line per request as it ends

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
