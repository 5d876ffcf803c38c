package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	_ "image/gif" // MMMU images are PNG, JPEG or GIF
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MMMU's place on the Hugging Face Hub: the Math config's test split,
// which is one parquet shard.
const (
	MMMURepo = "MMMU/MMMU"
	MMMUFile = "Math/test-00000-of-00001.parquet"
)

// mmmuExample is one MMMU question; image is image_1's file, nil when the
// example has none.
type mmmuExample struct {
	question *string
	image    []byte
	bad      error // image_1 could not be read; the example is reported and skipped
}

// loadMMMU is sample_mmmu_requests: MMMU Math test questions with their
// first image, sampled with random.sample when there are more than
// --num-prompts, each sent with "Question: {question}\n\nAnswer: " and
// --random-output-len output tokens.
func loadMMMU(ctx context.Context, p Params, env Env) ([]Row, error) {
	raw, err := mmRawText("mmmu", p.Backend)
	if err != nil {
		return nil, err
	}
	path, label, source := p.Path, "--dataset-path "+p.Path, p.Path
	if path == "" {
		if env.Fetch == nil {
			return nil, fmt.Errorf("--dataset-path is empty and downloading is not available; pass --dataset-path with a local copy of %s from %s (parquet), or a JSONL file", MMMUFile, MMMURepo)
		}
		fmt.Fprintln(env.Out, "Loading MMMU dataset from HuggingFace...")
		if path, err = env.Fetch(ctx, "dataset", MMMURepo, MMMUFile); err != nil {
			return nil, fmt.Errorf("downloading %s from %s failed (or pass --dataset-path with a local parquet or JSONL copy): %v", MMMUFile, MMMURepo, err)
		}
		label, source = "downloaded MMMU file "+path, "HuggingFace"
	} else {
		fmt.Fprintf(env.Out, "Loading MMMU dataset from %s...\n", path)
	}

	var picked []mmmuExample
	sample := func(total int) []int {
		if total > p.NumPrompts {
			return env.Py.Sample(total, p.NumPrompts)
		}
		idx := make([]int, total)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	var total int
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a parquet or JSONL file", label)
	}
	if isParquet(path) {
		var order []int
		byIndex := map[int]mmmuExample{}
		total, err = readMMMUParquet(path, label, func(n int) map[int]bool {
			order = sample(n)
			keep := make(map[int]bool, len(order))
			for _, i := range order {
				keep[i] = true
			}
			return keep
		}, func(i int, r mmmuParquetRow) {
			ex := mmmuExample{question: r.Question}
			if r.Image1 != nil {
				ex.image = r.Image1.Bytes
				if ex.image == nil && r.Image1.Path != nil {
					ex.bad = fmt.Errorf("image_1 has a path (%s) but no bytes", *r.Image1.Path)
				}
			}
			byIndex[i] = ex
		})
		if err != nil {
			return nil, err
		}
		for _, i := range order {
			picked = append(picked, byIndex[i])
		}
	} else {
		all, err := readMMMUJSONL(path, label)
		if err != nil {
			return nil, err
		}
		total = len(all)
		for _, i := range sample(total) {
			picked = append(picked, all[i])
		}
	}
	fmt.Fprintf(env.Out, "Successfully loaded MMMU Math dataset from %s with %d examples\n", source, total)
	// The reference prints this also when there are exactly as many
	// examples as asked for, which is not "less than".
	if total < p.NumPrompts {
		fmt.Fprintf(env.Out, "Dataset has less than %d examples, using all examples\n", p.NumPrompts)
	}
	fmt.Fprintf(env.Out, "Selected %d examples for benchmarking\n", len(picked))

	vision, err := loadVision(ctx, p, env)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Out, "Vision tokens: %s.\n", vision.desc)
	b := newMMRows(env.Tok, vision, raw, env.Out)

	type built struct {
		row Row
		ok  bool
		err error
	}
	res := make([]built, len(picked))
	err = env.meter.stage("Building MMMU prompts", len(picked)).each(len(picked), func(i int) {
		ex := picked[i]
		picked[i] = mmmuExample{}
		if ex.bad != nil {
			res[i].err = ex.bad
			return
		}
		if ex.image == nil {
			return
		}
		pngData, w, h, err := mmmuPNG(ex.image)
		if err != nil {
			res[i].err = err
			return
		}
		q := "None" // Python formats a missing question so
		if ex.question != nil {
			q = *ex.question
		}
		text := "Question: " + q + "\n\nAnswer: "
		img := mmImage{uri: dataURI("image/png", pngData), w: w, h: h}
		res[i] = built{row: b.row(text, []mmImage{img}, p.RandomOutputLen), ok: true}
	})
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(res))
	for i, r := range res {
		if r.err != nil {
			fmt.Fprintf(env.Out, "Error processing example %d: %v\n", i, r.err)
		} else if r.ok {
			rows = append(rows, r.row)
		}
	}
	fmt.Fprintf(env.Out, "\nCreated %d MMMU prompts\n", len(rows))
	return rows, nil
}

// readMMMUJSONL reads a JSONL file of {"question": ..., "image_1": ...}
// lines. image_1 is a data URI, a file path (relative to the JSONL file),
// {"bytes": base64, "path": ...} as Hugging Face datasets export an Image,
// or null.
func readMMMUJSONL(path, label string) ([]mmmuExample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", label, unwrapPath(err))
	}
	defer f.Close()
	dir := filepath.Dir(path)
	var out []mmmuExample
	r := bufio.NewReaderSize(f, 1<<20)
	for line := 1; ; line++ {
		data, rerr := r.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, fmt.Errorf("%s: line %d: %v", label, line, rerr)
		}
		if len(bytes.TrimSpace(data)) > 0 {
			ex, err := parseMMMULine(data, dir)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: %v", label, line, err)
			}
			out = append(out, ex)
		}
		if rerr != nil {
			return out, nil
		}
	}
}

func parseMMMULine(data []byte, dir string) (mmmuExample, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return mmmuExample{}, fmt.Errorf("invalid JSON object: %v", err)
	}
	var ex mmmuExample
	if q, ok := m["question"]; ok && string(q) != "null" {
		var s string
		if err := json.Unmarshal(q, &s); err != nil {
			return ex, fmt.Errorf("field question: want a string")
		}
		ex.question = &s
	}
	raw, ok := m["image_1"]
	if !ok || string(raw) == "null" {
		return ex, nil
	}
	var s string
	var obj struct {
		Bytes *string `json:"bytes"`
		Path  *string `json:"path"`
	}
	var err error
	switch {
	case json.Unmarshal(raw, &s) == nil:
		if rest, ok := strings.CutPrefix(s, "data:"); ok {
			_, b64, found := strings.Cut(rest, ";base64,")
			if !found {
				return ex, fmt.Errorf("field image_1: a data URI must be base64 (data:<type>;base64,...)")
			}
			if ex.image, err = base64.StdEncoding.DecodeString(b64); err != nil {
				return ex, fmt.Errorf("field image_1: bad base64: %v", err)
			}
			return ex, nil
		}
		return readImageFile(ex, s, dir)
	case json.Unmarshal(raw, &obj) == nil:
		if obj.Bytes != nil {
			if ex.image, err = base64.StdEncoding.DecodeString(*obj.Bytes); err != nil {
				return ex, fmt.Errorf("field image_1.bytes: bad base64: %v", err)
			}
			return ex, nil
		}
		if obj.Path != nil {
			return readImageFile(ex, *obj.Path, dir)
		}
		return ex, nil
	}
	return ex, fmt.Errorf("field image_1: want a data URI, a file path, {\"bytes\": base64} or null")
}

func readImageFile(ex mmmuExample, name, dir string) (mmmuExample, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return ex, fmt.Errorf("field image_1: %s: %v", name, unwrapPath(err))
	}
	ex.image = data
	return ex, nil
}

// mmmuPNG turns an image file into the PNG the reference sends: PIL's
// RGBA images become RGB (the alpha dropped, the colour kept), other PNGs
// keep their pixels and are sent as they are, and other formats are
// re-encoded as PNG.
func mmmuPNG(data []byte) (out []byte, w, h int, err error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("cannot identify image file: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxImagePixels/cfg.Height {
		return nil, 0, 0, fmt.Errorf("%s image of %dx%d pixels: empty or too large", format, cfg.Width, cfg.Height)
	}
	const colorTypeAt = 25 // PNG signature, IHDR length and type, width, height, bit depth
	if format == "png" && len(data) > colorTypeAt && data[colorTypeAt] != 6 {
		return data, cfg.Width, cfg.Height, nil
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("cannot decode %s image: %v", format, err)
	}
	if format == "png" {
		img = dropAlpha(img)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, 0, 0, err
	}
	return buf.Bytes(), cfg.Width, cfg.Height, nil
}

// dropAlpha is PIL's convert("RGB") of an RGBA image: the straight
// (non-premultiplied) colour with the alpha set opaque.
func dropAlpha(img image.Image) image.Image {
	n, ok := img.(*image.NRGBA)
	if !ok {
		n = image.NewNRGBA(img.Bounds())
		draw.Draw(n, n.Rect, img, img.Bounds().Min, draw.Src)
	}
	for i := 3; i < len(n.Pix); i += 4 {
		n.Pix[i] = 255
	}
	return n
}

func preflightMMMU(p Params) error {
	_, err := mmRawText("mmmu", p.Backend)
	return err
}
