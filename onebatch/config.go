// Package onebatch is "benchserve one-batch", a drop-in for SGLang's
// bench_one_batch_server (one-batch spec): for every batch size, input
// length and output length it sends one batch of prompts as one streamed
// request and reports the batch's latency, the time until its last prompt
// started, and the throughputs derived from them.
package onebatch

import (
	"fmt"
	"io"
	"time"

	"benchserve/backend"
	"benchserve/dataset"
)

// Config is the parsed command line.
type Config struct {
	// Target: BaseURL, else http://Host:Port of a server already running.
	BaseURL string
	Host    string
	Port    int
	Backend string // sglang or vllm

	ModelPath          *string // --model-path, only for the pydantic file
	TokenizerPath      string  // --tokenizer-path
	LocalTokenizerPath string  // --local-tokenizer-path
	TPSize             int
	HourlyCostPerGPU   float64

	RunName                    string
	BatchSizes                 []int
	InputLens, OutputLens      []int
	InputLensSet, OutputLenSet bool // given (a list) or default (a tuple)
	SkipWarmup                 bool
	EnableMultiBatch           bool
	Seed                       int

	Temperature      float64
	DisableIgnoreEOS bool
	ReturnLogprob    bool
	StreamInterval   int
	ParallelBatch    bool
	FakePrefill      bool
	LoraNames        []string // nil: none
	LoraDistribution string
	LoraZipfAlpha    float64

	DatasetName       string
	DatasetPath       string
	FixedPromptFile   string
	ApplyChatTemplate bool
	GSPNumGroups      int
	GSPSystemLen      int
	GSPQuestionLen    int
	GSPOutputLen      int
	CacheHitRate      float64

	ResultFilename         string
	PydanticResultFilename *string
	AppendGithubSummary    bool
	ShowReport             bool
	ServerArgsForMetrics   []string // nil: not given

	Profile           bool
	ProfileActivities []string
	ProfileStartStep  *int
	ProfileSteps      int
	ProfileByStage    bool
	ProfilePrefix     *string
	ProfileOutputDir  *string

	// Idle bounds the connect and each wait for bytes (the reference's
	// 600 s per socket operation).
	Idle time.Duration
}

// Env is the process around a run.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Version is the client's, written in each row.
	Version string
	// FlushPause is the wait between flush tries (2 s; tests shorten it).
	FlushPause time.Duration
	// Now is the wall clock for profile directory names; nil is time.Now.
	Now func() time.Time
	// Interrupt is closed at the user's first interrupt: no case starts
	// after it, and the case in flight has Grace (0: exit.Grace)
	// to finish, or until Cut closes (the second interrupt). Before the
	// first case, the interrupt ends the run at once.
	Interrupt, Cut <-chan struct{}
	Grace          time.Duration
}

// replay reports whether the dataset sends recorded prompts.
func replay(name string) bool {
	s, _ := dataset.Lookup(name)
	return s.Recorded
}

// datasetSpec is the dataset table's row of c's dataset.
func datasetSpec(c *Config) dataset.Spec {
	s, _ := dataset.Lookup(c.DatasetName)
	return s
}

// caseName names a case in errors.
func caseName(bs, il, ol int) string { return fmt.Sprintf("bs=%d in=%d out=%d", bs, il, ol) }

// vllm and sglang say whose server --backend names (the backend table's
// row for it): vLLM's /v1/completions, or SGLang's /generate.
func (c *Config) vllm() bool   { s, _ := backend.Lookup(c.Backend); return s.VLLM }
func (c *Config) sglang() bool { s, _ := backend.Lookup(c.Backend); return s.SGLang }
