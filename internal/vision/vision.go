// Package vision counts the prompt tokens an image becomes: the client
// estimates them (dataset), and the simulator counts image parts the same
// way, so that a rehearsal of an image run has the totals a server would.
package vision

import (
	"encoding/base64"
	"image"
	_ "image/gif" // the formats the image datasets and users send
	_ "image/jpeg"
	_ "image/png"
	"math"
	"strings"
)

// Qwen2-VL's processor defaults (transformers' Qwen2VLImageProcessor).
const (
	QwenPatch     = 14
	QwenMerge     = 2
	QwenMinPixels = 56 * 56
	QwenMaxPixels = 28 * 28 * 1280
	// EstimateMaxPixels is the value Qwen2-VL and Qwen2.5-VL publish in
	// their preprocessor_config.json, which the estimate uses.
	EstimateMaxPixels = 12845056
)

// SmartResize is transformers' Qwen2-VL smart_resize: the size an image is
// resized to, each side a multiple of factor, the area within
// [minPixels, maxPixels], the aspect ratio kept as far as possible. Python
// rounds half to even.
func SmartResize(h, w, factor, minPixels, maxPixels int) (int, int) {
	fh, fw, ff := float64(h), float64(w), float64(factor)
	hBar := int(math.RoundToEven(fh/ff)) * factor
	wBar := int(math.RoundToEven(fw/ff)) * factor
	switch {
	case hBar*wBar > maxPixels:
		beta := math.Sqrt(fh * fw / float64(maxPixels))
		hBar = max(factor, int(math.Floor(fh/beta/ff))*factor)
		wBar = max(factor, int(math.Floor(fw/beta/ff))*factor)
	case hBar*wBar < minPixels:
		beta := math.Sqrt(float64(minPixels) / (fh * fw))
		hBar = int(math.Ceil(fh*beta/ff)) * factor
		wBar = int(math.Ceil(fw*beta/ff)) * factor
	}
	return hBar, wBar
}

// QwenTokens counts as Qwen2-VL's processor: the resized image in
// patches, merged merge × merge into one token.
func QwenTokens(w, h, patch, merge, minPixels, maxPixels int) int {
	rh, rw := SmartResize(h, w, patch*merge, minPixels, maxPixels)
	return (rh / patch) * (rw / patch) / (merge * merge)
}

// Estimate is the count used when the model's processor is unknown:
// Qwen2.5-VL's, one token per 28 × 28 pixels of the resized image.
func Estimate(w, h int) int {
	return QwenTokens(w, h, QwenPatch, QwenMerge, QwenMinPixels, EstimateMaxPixels)
}

// DataURISize is the width and height of the image in a base64 data URI
// (PNG, JPEG or GIF), read from its header alone; ok is false for any
// other URL or an image that cannot be read.
func DataURISize(uri string) (w, h int, ok bool) {
	rest, found := strings.CutPrefix(uri, "data:")
	if !found {
		return 0, 0, false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return 0, 0, false
	}
	return Base64Size(data)
}

// Base64Size is the width and height of a base64-encoded image.
func Base64Size(data string) (w, h int, ok bool) {
	cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}
