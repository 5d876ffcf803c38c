package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"benchserve/internal/vision"
)

// visionTokens says how many prompt tokens an image of a given size
// becomes: what the model's processor expands its image placeholder to.
// Without Python's processor we know the formula for a few processor
// families; for the others the count is an estimate, and the server's
// prompt_tokens (which replaces the dataset's count where it is reported)
// is the truth.
type visionTokens struct {
	// desc says where the count comes from, for the printed note.
	desc string
	// exact is false for the estimate.
	exact bool
	// perImage is the token count of one image of w × h pixels.
	perImage func(w, h int) int
	// imageToken is the placeholder the processor expands ("" unknown).
	imageToken string
}

// Qwen2-VL's processor defaults, and the estimate's bound (see vision).
const (
	qwenPatch         = vision.QwenPatch
	qwenMerge         = vision.QwenMerge
	qwenMinPixels     = vision.QwenMinPixels
	qwenMaxPixels     = vision.QwenMaxPixels
	estimateMaxPixels = vision.EstimateMaxPixels
)

var smartResize = vision.SmartResize

// qwenVision counts as Qwen2-VL's processor: the resized image in patches,
// merged merge × merge into one token.
func qwenVision(desc string, exact bool, patch, merge, minPixels, maxPixels int) *visionTokens {
	return &visionTokens{
		desc: desc, exact: exact, imageToken: "<|image_pad|>",
		perImage: func(w, h int) int {
			return vision.QwenTokens(w, h, patch, merge, minPixels, maxPixels)
		},
	}
}

// estimateVision is the count used when the model's processor is unknown:
// Qwen2.5-VL's, one token per 28 × 28 pixels of the resized image.
func estimateVision(why string) *visionTokens {
	v := qwenVision(fmt.Sprintf("estimated as Qwen2.5-VL counts them (one token per 28x28 pixels, %s), since %s; the server's prompt_tokens replace the estimate where reported",
		"at most 12845056 pixels", why), false, qwenPatch, qwenMerge, qwenMinPixels, estimateMaxPixels)
	v.imageToken = ""
	return v
}

// processorConfig holds the fields of preprocessor_config.json and
// processor_config.json that the counts need; numbers come as raw JSON as
// processors write some of them as objects.
type processorConfig struct {
	ImageProcessorType string          `json:"image_processor_type"`
	ProcessorClass     string          `json:"processor_class"`
	PatchSize          json.RawMessage `json:"patch_size"`
	MergeSize          json.RawMessage `json:"merge_size"`
	MinPixels          json.RawMessage `json:"min_pixels"`
	MaxPixels          json.RawMessage `json:"max_pixels"`
	Size               json.RawMessage `json:"size"`
	CropSize           json.RawMessage `json:"crop_size"`
	ImageSeqLength     json.RawMessage `json:"image_seq_length"`
	ImageToken         string          `json:"image_token"`
	NumAdditional      json.RawMessage `json:"num_additional_image_tokens"`
	FeatureStrategy    string          `json:"vision_feature_select_strategy"`
}

// rawInt reads a JSON integer (or a float with an integral value); ok is
// false when raw is absent, null or not such a number.
func rawInt(raw json.RawMessage) (int, bool) {
	var f float64
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<40 {
		return 0, false
	}
	return int(f), true
}

// rawSize reads {"height": h, "width": w}, or a square from
// {"shortest_edge": n}.
func rawSize(raw json.RawMessage) (h, w int, ok bool) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return 0, 0, false
	}
	if h, ok1 := rawInt(m["height"]); ok1 {
		if w, ok2 := rawInt(m["width"]); ok2 && h > 0 && w > 0 {
			return h, w, true
		}
	}
	if n, ok := rawInt(m["shortest_edge"]); ok && n > 0 {
		return n, n, true
	}
	return 0, 0, false
}

// visionFromConfig picks the count for a processor; nil when its formula
// is not known. pre is preprocessor_config.json, proc processor_config.json
// (zero when absent); from names the files in the description.
func visionFromConfig(pre, proc processorConfig, from string) *visionTokens {
	class := pre.ProcessorClass
	if class == "" {
		class = proc.ProcessorClass
	}
	if strings.HasPrefix(pre.ImageProcessorType, "Qwen2VLImageProcessor") || strings.HasPrefix(class, "Qwen2VLProcessor") ||
		strings.HasPrefix(class, "Qwen2_5_VLProcessor") {
		patch, merge := qwenPatch, qwenMerge
		if n, ok := rawInt(pre.PatchSize); ok && n > 0 {
			patch = n
		}
		if n, ok := rawInt(pre.MergeSize); ok && n > 0 {
			merge = n
		}
		minPx, maxPx := qwenMinPixels, qwenMaxPixels
		var size map[string]json.RawMessage
		if json.Unmarshal(pre.Size, &size) == nil {
			if n, ok := rawInt(size["shortest_edge"]); ok {
				minPx = n
			}
			if n, ok := rawInt(size["longest_edge"]); ok {
				maxPx = n
			}
		}
		if n, ok := rawInt(pre.MinPixels); ok {
			minPx = n
		}
		if n, ok := rawInt(pre.MaxPixels); ok {
			maxPx = n
		}
		if minPx <= 0 || maxPx < minPx {
			return nil
		}
		return qwenVision(fmt.Sprintf("Qwen2-VL smart resize (patch %d, merge %d, %d to %d pixels) from %s", patch, merge, minPx, maxPx, from),
			true, patch, merge, minPx, maxPx)
	}
	token := proc.ImageToken
	if token == "" {
		token = "<image>"
	}
	for _, raw := range []json.RawMessage{pre.ImageSeqLength, proc.ImageSeqLength} {
		if n, ok := rawInt(raw); ok && n > 0 {
			return &visionTokens{desc: fmt.Sprintf("a fixed %d per image (image_seq_length) from %s", n, from), exact: true,
				perImage: func(int, int) int { return n }, imageToken: token}
		}
	}
	if strings.HasPrefix(class, "LlavaProcessor") {
		// LlavaProcessor: (height/patch) × (width/patch) of the cropped
		// image, plus the extra tokens (CLS), minus one with the "default"
		// feature strategy, the same for every image.
		patch, ok := rawInt(proc.PatchSize)
		if !ok || patch <= 0 || proc.FeatureStrategy == "" {
			return nil
		}
		h, w, ok := rawSize(pre.CropSize)
		if !ok {
			if h, w, ok = rawSize(pre.Size); !ok {
				return nil
			}
		}
		extra, _ := rawInt(proc.NumAdditional)
		n := (h/patch)*(w/patch) + extra
		if proc.FeatureStrategy == "default" {
			n--
		}
		return &visionTokens{desc: fmt.Sprintf("a fixed %d per image (LLaVA, %dx%d crop, patch %d) from %s", n, h, w, patch, from), exact: true,
			perImage: func(int, int) int { return n }, imageToken: token}
	}
	return nil
}

// hubRepoID is an "org/name" repo id; bare names are not tried, so that a
// served model name like "default" is not looked up on the Hub.
var hubRepoID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
})

// loadVision finds how the model's processor counts image tokens: from its
// preprocessor_config.json (and processor_config.json) in the local model
// directory or on the Hub. A file that cannot be had gives the estimate; a
// file that is present but broken is an error.
func loadVision(ctx context.Context, p Params, env Env) (*visionTokens, error) {
	model := p.Model
	read := func(name string) ([]byte, string, error) {
		path := filepath.Join(model, name)
		data, err := os.ReadFile(path)
		return data, path, err
	}
	switch st, err := os.Stat(model); {
	case model == "":
		return estimateVision("no model is known"), nil
	case err == nil && st.IsDir():
	case hubRepoID().MatchString(model) && env.Fetch != nil && !strings.Contains(model, ".."):
		read = func(name string) ([]byte, string, error) {
			path, err := env.Fetch(ctx, "model", model, name)
			if err != nil {
				return nil, model + "/" + name, err
			}
			data, err := os.ReadFile(path)
			return data, model + "/" + name, err
		}
	default:
		return estimateVision(fmt.Sprintf("--model %s is neither a local directory nor a Hub id", model)), nil
	}

	data, where, err := read("preprocessor_config.json")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return estimateVision(fmt.Sprintf("%s could not be read (%v)", where, shortErr(err))), nil
	}
	var pre, proc processorConfig
	if err := json.Unmarshal(data, &pre); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %v", where, err)
	}
	from := where
	if pdata, pwhere, err := read("processor_config.json"); err == nil {
		if err := json.Unmarshal(pdata, &proc); err != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %v", pwhere, err)
		}
		from += " and processor_config.json"
	}
	if v := visionFromConfig(pre, proc, from); v != nil {
		return v, nil
	}
	kind := pre.ImageProcessorType
	if kind == "" {
		kind = pre.ProcessorClass
	}
	return estimateVision(fmt.Sprintf("the formula of %s's processor (%s) is not known", model, kind)), nil
}

// shortErr keeps the part of a download or file error that says why.
func shortErr(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s)-i < 200 {
		return s[i+2:]
	}
	return s
}
