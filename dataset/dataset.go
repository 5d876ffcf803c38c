package dataset

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"benchserve/internal/py/pyrand"
	"benchserve/tokenizer"
)

// Params are the dataset flags.
type Params struct {
	Name       string // --dataset-name: a row of the table (spec.go)
	Path       string // --dataset-path; "" downloads ShareGPT
	NumPrompts int

	SharegptOutputLen  *int // nil: each completion's own length
	SharegptContextLen *int // nil or 0: no limit

	RandomInputLen   int
	RandomOutputLen  int
	RandomRangeRatio float64
	// SessionTurns (--session-turns, N or A-B) makes each random or
	// random-ids row a conversation; PerTurnInputLen is the new tokens of
	// each turn after the first (nil: RandomInputLen).
	SessionTurns    *string
	PerTurnInputLen *int
	// RerankDocs (--rerank-docs) makes each random or random-ids row a
	// query with that many documents, each of RandomInputLen tokens.
	RerankDocs int

	// TokenizePrompt makes random and random-ids rows carry IDs instead of
	// Text; sharegpt refuses it.
	TokenizePrompt    bool
	PromptSuffix      string
	ApplyChatTemplate bool

	// Seed is --seed (the GSP cache key and zipf generator use it).
	Seed int
	// Backend and Model are the run's, for datasets whose rows depend on
	// them (image: what to send; vision token counts: the model's
	// preprocessor_config.json).
	Backend Backend
	Model   string

	// agentic-trace
	DatasetOffset   int
	AgenticMaxTurns *int
	// speed-bench
	SpeedBenchCategory  *string
	SpeedBenchOutputLen int
	// image
	ImageCount       int
	ImageResolution  string
	RandomImageCount bool
	ImageFormat      string
	ImageContent     string
	// generated-shared-prefix
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
	// mooncake
	MooncakeSlowdown  float64
	MooncakeNumRounds int
	MooncakeWorkload  string
	// audio
	AudioDurationS  string
	AudioSampleRate int
}

// Backend is what the datasets know of the --backend the rows go to: its
// capabilities, which the caller fills in from the backend's table (this
// package is upstream of package backend and does not import it), and
// names only for messages. The zero Backend is an unknown one: the chat
// checks let it pass and the image datasets build the rows of the
// reference's default backend, sglang.
type Backend struct {
	Name   string // --backend, for messages
	Chat   bool   // it sends OpenAI chat messages
	Images Images // how it carries the image datasets' images
	// ChatNames and ImageNames are the backends with Chat and with
	// Images, in the --backend order, for the messages that list them.
	ChatNames, ImageNames []string
}

// Images is how a backend carries the images of the image datasets, as
// the reference's create_mm_data_row builds them.
type Images uint8

// The image forms.
const (
	// ImagesNone: the image datasets refuse the backend.
	ImagesNone Images = iota
	// ImagesNative: the prompt templated with the image placeholders, and
	// the images as image_data.
	ImagesNative
	// ImagesChat: the raw text and image_url parts; the server applies the
	// chat template.
	ImagesChat
)

// noChat reports a known backend that cannot send chat messages.
func (b Backend) noChat() bool { return b.Name != "" && !b.Chat }

// chats lists the chat backends as the messages do: "a, b or c".
func (b Backend) chats() string {
	n := len(b.ChatNames)
	if n < 2 {
		return strings.Join(b.ChatNames, "")
	}
	return strings.Join(b.ChatNames[:n-1], ", ") + " or " + b.ChatNames[n-1]
}

// Env is what the datasets draw on.
type Env struct {
	Tok tokenizer.Tokenizer
	// Py and NP are the global generators seeded with --seed; the datasets
	// draw first and the scheduler continues from where they stop.
	Py *pyrand.Python
	NP *pyrand.NumPy
	// Fetch downloads a Hub file and returns its local path; nil refuses
	// downloading.
	Fetch func(ctx context.Context, repoType, repoID, filename string) (string, error)
	// Out receives the lines the reference prints ("#Input tokens: N").
	Out io.Writer
	// HTTP downloads files that are not on the Hub (mooncake traces); nil
	// is http.DefaultClient.
	HTTP *http.Client
	// CacheDir holds what datasets keep between runs (the GSP cache,
	// downloaded traces); "" is the user cache directory's benchserve/.
	CacheDir string
	// TraceBaseURL replaces the mooncake traces' published location
	// (tests); "" is the published one.
	TraceBaseURL string
	// Progress receives a line now and then while a long build runs
	// ("Generating images: 500/1500 (12 s)"); nil prints none. It is not
	// Out, which keeps the reference's lines.
	Progress io.Writer
	// Now is the progress lines' clock; nil is time.Now.
	Now func() time.Time
	// MemAvailable is how many bytes the rows may take; ok is false when
	// that is unknown, and then no build is refused. nil reads the system's
	// (MemAvailable in /proc/meminfo, within the cgroup's limit).
	MemAvailable func() (bytes float64, ok bool)

	meter *meter // set by Load
}

// ShareGPT's place on the Hugging Face Hub.
const (
	ShareGPTRepo = "anon8231489123/ShareGPT_Vicuna_unfiltered"
	ShareGPTFile = "ShareGPT_V3_unfiltered_cleaned_split.json"
)

// randomLens is compute_random_lens: n lengths drawn uniformly from
// [max(int(full*ratio), 1), full] with np.random.randint, or n zeros
// without a draw when full <= 0. flag names full in errors.
func randomLens(np *pyrand.NumPy, full int, ratio float64, n int, flag string) ([]int, error) {
	return drawLens(np, full, ratio, n, n, flag, nil)
}

// drawLens is randomLens keeping only the first keep lengths: all n are
// drawn, so that the generator ends where the reference's does, but a
// dataset that can use fewer rows does not hold n. st counts the draws
// and stops them when the build is cancelled.
func drawLens(np *pyrand.NumPy, full int, ratio float64, n, keep int, flag string, st *stage) ([]int, error) {
	keep = min(keep, n)
	out := make([]int, keep)
	if full <= 0 {
		return out, nil
	}
	lo, err := lensLow(full, ratio, flag)
	if err != nil {
		return nil, err
	}
	const chunk = 4096 // draws between checks of the context
	for i := 0; i < n; i++ {
		v := int(np.RandInt(lo, int64(full)+1))
		if i < keep {
			out[i] = v
		}
		if i%chunk == chunk-1 {
			if err := st.add(chunk); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// lensLow is the shortest length compute_random_lens draws, or an error
// naming the flags when the range is empty or the ratio not a number.
func lensLow(full int, ratio float64, flag string) (int64, error) {
	if full <= 0 {
		return 0, nil
	}
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		return 0, fmt.Errorf("--random-range-ratio %v: not a finite number", ratio)
	}
	low := math.Trunc(float64(full) * ratio) // Python's int() truncates toward zero
	if low > float64(full) {
		return 0, fmt.Errorf("--random-range-ratio %s: the shortest length %.0f exceeds %s %d",
			strconv.FormatFloat(ratio, 'g', -1, 64), low, flag, full)
	}
	return max(int64(low), 1), nil
}

// printSums prints the dataset's totals as the reference does with np.sum,
// which gives the float 0.0 for an empty list.
func printSums(w io.Writer, in, out []int) {
	fmt.Fprintf(w, "#Input tokens: %s\n", npSum(in))
	fmt.Fprintf(w, "#Output tokens: %s\n", npSum(out))
}

func npSum(v []int) string {
	if len(v) == 0 {
		return "0.0"
	}
	s := 0
	for _, x := range v {
		s += x
	}
	return strconv.Itoa(s)
}

// shareGPTPath is the ShareGPT file to read: the user's, else a download.
// label is how errors name it.
func shareGPTPath(ctx context.Context, p Params, env Env) (path, label string, err error) {
	if p.Path != "" {
		return p.Path, "--dataset-path " + p.Path, nil
	}
	if env.Fetch == nil {
		return "", "", fmt.Errorf("--dataset-path is empty and downloading is not available; pass --dataset-path with a local copy of %s", ShareGPTFile)
	}
	path, err = env.Fetch(ctx, "dataset", ShareGPTRepo, ShareGPTFile)
	if err != nil {
		return "", "", fmt.Errorf("downloading %s from %s failed: %v; pass --dataset-path with a local copy", ShareGPTFile, ShareGPTRepo, err)
	}
	return path, "downloaded ShareGPT file " + path, nil
}

// shortfall warns when the file gave fewer rows than --num-prompts; the
// reference returns them silently.
func shortfall(w io.Writer, label string, got, want int) {
	if got < want {
		fmt.Fprintf(w, "Warning: %s gave only %d of the %d prompts asked for by --num-prompts\n", label, got, want)
	}
}
