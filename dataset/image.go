package dataset

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"benchserve/internal/py/argparse"
	"benchserve/tokenizer"
)

// imageRes is --image-resolution: one size, or bounds each image's size is
// drawn from.
type imageRes struct {
	random     bool
	minW, minH int
	maxW, maxH int
}

// resolutionPresets are the named sizes, width × height.
var resolutionPresets = map[string][2]int{
	"4k": {3840, 2160}, "1080p": {1920, 1080}, "720p": {1280, 720}, "360p": {640, 360},
}

// maxImagePixels bounds one image (8K is 33 Mpx), so that a typo fails
// with a message rather than by running out of memory.
const maxImagePixels = 100_000_000

const resolutionHelp = "choose from 4k, 1080p, 720p, 360p, HEIGHTxWIDTH (e.g. 1080x1920) or random:<min_h>x<min_w>-<max_h>x<max_w>"

// parseFixedRes is the reference's parse_image_resolution: a preset, or
// HEIGHTxWIDTH in digits; it returns width and height.
func parseFixedRes(s string) (w, h int, ok bool) {
	if wh, ok := resolutionPresets[s]; ok {
		return wh[0], wh[1], true
	}
	hs, ws, found := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	if !found || !allDigits(hs) || !allDigits(ws) {
		return 0, 0, false
	}
	h, err1 := strconv.Atoi(hs)
	w, err2 := strconv.Atoi(ws)
	if err1 != nil || err2 != nil || h <= 0 || w <= 0 {
		return 0, 0, false
	}
	return w, h, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseImageRes parses --image-resolution.
func parseImageRes(s string) (imageRes, error) {
	bad := func(why string) (imageRes, error) {
		return imageRes{}, fmt.Errorf("--image-resolution %s: %s", s, why)
	}
	var r imageRes
	if t := strings.TrimSpace(s); strings.HasPrefix(strings.ToLower(t), "random:") {
		lo, hi, found := strings.Cut(t[len("random:"):], "-")
		if !found {
			return bad("a random resolution is random:<min_h>x<min_w>-<max_h>x<max_w>, for example random:256x256-1024x1024")
		}
		var ok1, ok2 bool
		r.minW, r.minH, ok1 = parseFixedRes(lo)
		r.maxW, r.maxH, ok2 = parseFixedRes(hi)
		switch {
		case !ok1 || !ok2:
			return bad("unsupported bound; " + resolutionHelp)
		case r.minW > r.maxW || r.minH > r.maxH:
			return bad("the minimum exceeds the maximum")
		}
		r.random = true
	} else {
		w, h, ok := parseFixedRes(s)
		if !ok {
			return bad("unsupported resolution; " + resolutionHelp)
		}
		r.minW, r.minH, r.maxW, r.maxH = w, h, w, h
	}
	if r.maxW > maxImagePixels/r.maxH {
		return bad(fmt.Sprintf("%dx%d is more than %d pixels per image", r.maxH, r.maxW, maxImagePixels))
	}
	return r, nil
}

// loadImage is sample_image_requests: random text of --random-input-len
// tokens with --image-count generated pictures per request.
func loadImage(ctx context.Context, p Params, env Env) ([]Row, error) {
	raw, err := mmRawText("image", p.Backend)
	if err != nil {
		return nil, err
	}
	if p.ImageCount < 1 {
		return nil, fmt.Errorf("--image-count %d: must be at least 1", p.ImageCount)
	}
	if p.ImageFormat != "jpeg" && p.ImageFormat != "png" {
		return nil, fmt.Errorf("--image-format %s: choose jpeg or png", p.ImageFormat)
	}
	if p.ImageContent != "random" && p.ImageContent != "blank" {
		return nil, fmt.Errorf("--image-content %s: choose random or blank", p.ImageContent)
	}
	res, err := parseImageRes(p.ImageResolution)
	if err != nil {
		return nil, err
	}
	n := p.NumPrompts

	if err := fitMemory(env, imageBytes(p, res), fmt.Sprintf("--num-prompts %d with --image-count %d", n, p.ImageCount),
		"--num-prompts, --image-count or --image-resolution"); err != nil {
		return nil, err
	}
	counts := make([]int, n)
	total := 0
	st := env.meter.stage("Drawing image counts", n)
	for i := range counts {
		counts[i] = p.ImageCount
		if p.RandomImageCount {
			counts[i] = int(env.NP.RandInt(1, int64(p.ImageCount)+1))
		}
		total += counts[i]
		if i%4096 == 4095 {
			if err := st.add(4096); err != nil {
				return nil, err
			}
		}
	}
	if res.maxW*res.maxH >= 1920*1080 && total >= 100 {
		fmt.Fprintf(env.Out, "Warning: High resolution (up to %dx%d) with %d total images may take a long time. Consider reducing resolution or image count.\n",
			res.maxW, res.maxH, total)
	}
	lens := env.meter.stage("Drawing lengths", 2*n)
	inLens, err := drawLens(env.NP, p.RandomInputLen, p.RandomRangeRatio, n, n, "--random-input-len", lens)
	if err != nil {
		return nil, err
	}
	outLens, err := drawLens(env.NP, p.RandomOutputLen, p.RandomRangeRatio, n, n, "--random-output-len", lens)
	if err != nil {
		return nil, err
	}

	vision, err := loadVision(ctx, p, env)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Out, "Vision tokens: %s.\n", vision.desc)
	b := newMMRows(env.Tok, vision, raw, env.Out)

	imgs, err := makeImages(env.meter.stage("Generating images", total), imageSpec{format: p.ImageFormat, blank: p.ImageContent == "blank", res: res}, total, env.NP)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("--dataset-name image: encoding an image: %v", err)
	}
	texts, err := mmTexts(env, b.padID, inLens)
	if err != nil {
		return nil, err
	}

	rows := make([]Row, n)
	starts := make([]int, n+1)
	for i, c := range counts {
		starts[i+1] = starts[i] + c
	}
	err = env.meter.stage("Building prompts", n).each(n, func(i int) {
		rows[i] = b.row(texts[i], imgs[starts[i]:starts[i+1]], outLens[i])
	})
	if err != nil {
		return nil, err
	}
	printImageStats(env, p, rows, counts, inLens, imgs, res.random)
	return rows, nil
}

// imageBytes is about what the image rows take: each random image's data
// URI (noise encodes to about 0.76 bytes a pixel as JPEG at quality 85
// and 3 as PNG, a third more in base64; a blank image is encoded once),
// the text and the rows themselves.
func imageBytes(p Params, res imageRes) float64 {
	n := float64(p.NumPrompts)
	perRow := float64(p.ImageCount)
	if p.RandomImageCount {
		perRow = (perRow + 1) / 2
	}
	pixels := float64(res.minW+res.maxW) / 2 * float64(res.minH+res.maxH) / 2
	perPixel := 0.7
	if p.ImageFormat == "png" {
		perPixel = 2.9
	}
	if p.ImageContent == "blank" {
		perPixel = 0
	}
	lo, _ := lensLow(p.RandomInputLen, p.RandomRangeRatio, "")
	text := meanLen(p.RandomInputLen, lo) * textBytesPerToken
	return n * (rowBytes + 8 + text + perRow*(48+pixels*perPixel*4/3))
}

// mmTexts is gen_mm_prompt for each length: ids drawn with Python's
// random.choices from the vocabulary without the special ids and the image
// placeholder, then decoded. The reference's pool follows get_vocab()'s
// order, which Python does not fix; ours is ascending ids.
func mmTexts(env Env, padID int, lens []int) ([]string, error) {
	pool := mmTextPool(env.Tok, padID)
	if len(pool) == 0 && slices.ContainsFunc(lens, func(n int) bool { return n > 0 }) {
		return nil, fmt.Errorf("tokenizer %s: no token ids left to build prompts from", env.Tok.Name())
	}
	draws := env.meter.stage("Drawing prompt tokens", sumInts(lens))
	picks := make([][]int, len(lens))
	for i, n := range lens {
		picks[i] = env.Py.Choices(len(pool), n)
		if err := draws.add(n); err != nil {
			return nil, err
		}
	}
	texts := make([]string, len(lens))
	err := env.meter.stage("Decoding prompts", len(lens)).each(len(lens), func(i int) {
		ids := picks[i]
		for j, k := range ids {
			ids[j] = pool[k]
		}
		texts[i] = env.Tok.Decode(ids)
		picks[i] = nil
	})
	return texts, err
}

// specialIDer is the part of a Hugging Face tokenizer that lists special
// and added tokens.
type specialIDer interface {
	SpecialIDs() []int
	AddedTokens() map[string]int
}

// mmTextPool is the ids gen_mm_prompt draws from.
func mmTextPool(tok tokenizer.Tokenizer, padID int) []int {
	skip := map[int]bool{}
	if padID >= 0 {
		skip[padID] = true
	}
	var added []int
	if s, ok := tok.(specialIDer); ok {
		for _, id := range s.SpecialIDs() {
			skip[id] = true
		}
		for _, id := range s.AddedTokens() {
			if id >= tok.VocabSize() {
				added = append(added, id)
			}
		}
		slices.Sort(added)
		added = slices.Compact(added)
	}
	pool := make([]int, 0, tok.VocabSize()+len(added))
	for id := range tok.VocabSize() {
		if !skip[id] {
			pool = append(pool, id)
		}
	}
	for _, id := range added {
		if !skip[id] {
			pool = append(pool, id)
		}
	}
	return pool
}

// printImageStats prints what the reference prints after building the
// image rows.
func printImageStats(env Env, p Params, rows []Row, counts, inLens []int, imgs []mmImage, randomRes bool) {
	w := env.Out
	in, out := make([]int, len(rows)), make([]int, len(rows))
	textLens, visionLens, overhead := make([]int, len(rows)), make([]int, len(rows)), make([]int, len(rows))
	for i, r := range rows {
		in[i], out[i] = r.PromptLen, r.OutputLen
		textLens[i], visionLens[i] = r.TextPromptLen, r.VisionPromptLen
		overhead[i] = r.TextPromptLen - inLens[i]
	}
	printSums(w, in, out)
	fmt.Fprintf(w, "#Total images: %d\n", len(imgs))
	if p.RandomImageCount && len(counts) > 0 {
		fmt.Fprintf(w, "#Images per request: min=%d, max=%d, mean=%.2f\n", slices.Min(counts), slices.Max(counts), meanInts(counts))
	} else {
		fmt.Fprintf(w, "#Images per request: %d (fixed)\n", p.ImageCount)
	}
	if randomRes && len(imgs) > 0 {
		ws, hs := make([]int, len(imgs)), make([]int, len(imgs))
		for i, img := range imgs {
			ws[i], hs[i] = img.w, img.h
		}
		fmt.Fprintf(w, "#Image resolution: min=%dx%d, max=%dx%d, mean=%.1fx%.1f\n",
			slices.Min(ws), slices.Min(hs), slices.Max(ws), slices.Max(hs), meanInts(ws), meanInts(hs))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\n=== Token Breakdown (per request avg / total) ===")
	for _, f := range []struct {
		label string
		vals  []int
	}{
		{"Raw text prompt tokens (without overhead)", inLens},
		{"Text prompt tokens (with chat template)", textLens},
		{"Text prompt overhead", overhead},
		{"Vision tokens", visionLens},
	} {
		fmt.Fprintf(w, "  %s: avg=%.1f, total=%s\n", f.label, meanInts(f.vals), npSum(f.vals))
	}
	bytes := 0
	for _, img := range imgs {
		bytes += len(img.uri)
	}
	fmt.Fprintf(w, "\nCreated %d %s %s images with average %d bytes per request\n", len(rows), p.ImageContent, p.ImageFormat, bytes/len(rows))
}

func meanInts(v []int) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}

// preflightImage is loadImage's checks of its flags.
func preflightImage(p Params) error {
	if _, err := mmRawText("image", p.Backend); err != nil {
		return err
	}
	if p.ImageCount < 1 {
		return fmt.Errorf("--image-count %d: must be at least 1", p.ImageCount)
	}
	if p.ImageFormat != "jpeg" && p.ImageFormat != "png" {
		return fmt.Errorf("--image-format %s: choose jpeg or png", p.ImageFormat)
	}
	if p.ImageContent != "random" && p.ImageContent != "blank" {
		return fmt.Errorf("--image-content %s: choose random or blank", p.ImageContent)
	}
	if _, err := parseImageRes(p.ImageResolution); err != nil {
		return err
	}
	return preflightLens(p)
}

// imageTag is the reference's result file name part for the image dataset.
func imageTag(p Params) string {
	return strconv.Itoa(p.RandomInputLen) + "_" + strconv.Itoa(p.RandomOutputLen) + "_" +
		strconv.Itoa(p.ImageCount) + "imgs_" + p.ImageResolution
}

var imageFlags = []Flag{
	{Opt: argparse.Option{Name: "--image-count", Type: argparse.Int, Default: 1,
		Help: "image: images per request."},
		Bind: argparse.Val(func(p *Params) *int { return &p.ImageCount }), Ignored: imageOnly},
	{Opt: argparse.Option{Name: "--image-resolution", Type: argparse.Str, Default: "1080p",
		Help: "image: 4k, 1080p, 720p, 360p, HxW (1080x1920) or random:HxW-HxW bounds."},
		Bind: argparse.Val(func(p *Params) *string { return &p.ImageResolution }), Ignored: imageOnly},
	{Opt: argparse.Option{Name: "--random-image-count", Action: argparse.StoreTrue,
		Help: "image: draw the number of images per request from 1 to --image-count."},
		Bind: argparse.Val(func(p *Params) *bool { return &p.RandomImageCount }), Ignored: imageOnly},
	{Opt: argparse.Option{Name: "--image-format", Type: argparse.Str, Default: "jpeg",
		Help: "image: jpeg or png."},
		Bind: argparse.Val(func(p *Params) *string { return &p.ImageFormat }), Ignored: imageOnly},
	{Opt: argparse.Option{Name: "--image-content", Type: argparse.Str, Default: "random",
		Help: "image: random or blank pixels."},
		Bind: argparse.Val(func(p *Params) *string { return &p.ImageContent }), Ignored: imageOnly},
}

func imageOnly(Spec) string { return "only the image dataset generates images" }
