package dataset

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"benchserve/backend"
	"benchserve/internal/py/pyjson"
	"benchserve/internal/py/pyrand"
)

func TestParseImageRes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want imageRes
		err  string
	}{
		{in: "4k", want: imageRes{minW: 3840, minH: 2160, maxW: 3840, maxH: 2160}},
		{in: "1080p", want: imageRes{minW: 1920, minH: 1080, maxW: 1920, maxH: 1080}},
		{in: "360p", want: imageRes{minW: 640, minH: 360, maxW: 640, maxH: 360}},
		// HEIGHTxWIDTH, case and surrounding space ignored.
		{in: " 1080X1920 ", want: imageRes{minW: 1920, minH: 1080, maxW: 1920, maxH: 1080}},
		{in: "random:256x256-720x1280", want: imageRes{random: true, minW: 256, minH: 256, maxW: 1280, maxH: 720}},
		{in: "Random:360p-720p", want: imageRes{random: true, minW: 640, minH: 360, maxW: 1280, maxH: 720}},
		{in: "1080P", err: "unsupported resolution"}, // presets are matched exactly
		{in: "0x10", err: "unsupported resolution"},
		{in: "10x", err: "unsupported resolution"},
		{in: "10x10x10", err: "unsupported resolution"},
		{in: "-10x10", err: "unsupported resolution"},
		{in: "random:10x10", err: "random:<min_h>x<min_w>-<max_h>x<max_w>"},
		{in: "random:20x20-10x30", err: "the minimum exceeds the maximum"},
		{in: "random:1x1-foo", err: "unsupported bound"},
		{in: "20000x20000", err: "more than 100000000 pixels"},
	} {
		got, err := parseImageRes(tt.in)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "--image-resolution "+tt.in+": ") {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.err)
			}
		case err != nil || got != tt.want:
			t.Errorf("%q = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// decodeURI decodes an image data URI, checking its prefix.
func decodeURI(t *testing.T, uri, format string) image.Image {
	t.Helper()
	prefix := "data:image/" + format + ";base64,"
	if !strings.HasPrefix(uri, prefix) {
		t.Fatalf("data URI starts %q, want %q", uri[:min(len(uri), 40)], prefix)
	}
	data, err := base64.StdEncoding.DecodeString(uri[len(prefix):])
	if err != nil {
		t.Fatal(err)
	}
	var img image.Image
	if format == "png" {
		img, err = png.Decode(bytes.NewReader(data))
	} else {
		img, err = jpeg.Decode(bytes.NewReader(data))
	}
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func rgb(img image.Image, x, y int) [3]uint8 {
	r, g, b, _ := img.At(x, y).RGBA()
	return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

// TestMakeImagesDrawOrder checks the pixels and sizes against NumPy's
// legacy stream drawn in the reference's order: per image, the width and
// height (random resolutions), then rand(h, w, 3) row by row.
func TestMakeImagesDrawOrder(t *testing.T) {
	for _, w := range []int{1, 3} {
		setWorkers(t, w)
		for _, res := range []imageRes{
			{minW: 3, minH: 2, maxW: 3, maxH: 2},
			{random: true, minW: 1, minH: 2, maxW: 4, maxH: 5},
		} {
			np := pyrand.NewNumPy(7)
			imgs, err := makeImages(nil, imageSpec{format: "png", res: res}, 9, np)
			if err != nil {
				t.Fatal(err)
			}
			ref := pyrand.NewNumPy(7)
			for k, im := range imgs {
				wantW, wantH := res.minW, res.minH
				if res.random {
					wantW = int(ref.RandInt(int64(res.minW), int64(res.maxW)+1))
					wantH = int(ref.RandInt(int64(res.minH), int64(res.maxH)+1))
				}
				img := decodeURI(t, im.uri, "png")
				if b := img.Bounds(); im.w != wantW || im.h != wantH || b.Dx() != wantW || b.Dy() != wantH {
					t.Fatalf("image %d: %dx%d (encoded %v), want %dx%d", k, im.w, im.h, b, wantW, wantH)
				}
				for y := range wantH {
					for x := range wantW {
						var want [3]uint8
						for c := range want {
							want[c] = uint8(ref.RandomSample() * 255)
						}
						if got := rgb(img, x, y); got != want {
							t.Fatalf("workers %d, image %d pixel (%d,%d) = %v, want %v", w, k, x, y, got, want)
						}
					}
				}
			}
			if np.Uint32() != ref.Uint32() {
				t.Error("the generator did not stop where the reference's does")
			}
		}
	}
}

func TestMakeImagesBlankAndJPEG(t *testing.T) {
	np := pyrand.NewNumPy(3)
	imgs, err := makeImages(nil, imageSpec{format: "jpeg", blank: true, res: imageRes{minW: 32, minH: 16, maxW: 32, maxH: 16}}, 3, np)
	if err != nil {
		t.Fatal(err)
	}
	img := decodeURI(t, imgs[2].uri, "jpeg")
	if b := img.Bounds(); b.Dx() != 32 || b.Dy() != 16 || rgb(img, 5, 5) != [3]uint8{255, 255, 255} {
		t.Errorf("blank image %v, pixel %v", b, rgb(img, 5, 5))
	}
	if imgs[0].uri != imgs[2].uri {
		t.Error("blank images of one size differ")
	}
	if np.Uint32() != pyrand.NewNumPy(3).Uint32() {
		t.Error("blank images drew from the generator")
	}

	// Random JPEG pixels are the stream's, up to JPEG's loss.
	np = pyrand.NewNumPy(5)
	imgs, err = makeImages(nil, imageSpec{format: "jpeg", res: imageRes{minW: 64, minH: 64, maxW: 64, maxH: 64}}, 1, np)
	if err != nil {
		t.Fatal(err)
	}
	img = decodeURI(t, imgs[0].uri, "jpeg")
	ref := pyrand.NewNumPy(5)
	sum, want := 0.0, 0.0
	for y := range 64 {
		for x := range 64 {
			got := rgb(img, x, y)
			for c := range 3 {
				want += float64(uint8(ref.RandomSample() * 255))
				sum += float64(got[c])
			}
		}
	}
	if d := sum/(64*64*3) - want/(64*64*3); d > 2 || d < -2 {
		t.Errorf("mean pixel %.2f, the stream's %.2f", sum/(64*64*3), want/(64*64*3))
	}
}

// imageParams are the flags of a small image run on the tiny model.
func imageParams(dir, be string) Params {
	return Params{Name: "image", Backend: backendOf(be), Model: dir, NumPrompts: 3, RandomInputLen: 5, RandomOutputLen: 4, RandomRangeRatio: 1,
		ImageCount: 2, ImageResolution: "8x16", ImageFormat: "png", ImageContent: "blank"}
}

func TestLoadImage(t *testing.T) {
	dir, tok := tinyVLM(t, qwenPre)
	var out bytes.Buffer
	env := Env{Tok: tok, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42), Out: &out}
	rows, err := Load(context.Background(), imageParams(dir, "sglang"), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	// The text: 5 ids drawn with random.choices from the 53 ids that are
	// not special (7..59), decoded.
	py := pyrand.NewPython(42)
	// An 8x16 image: round(8/28) = 0, round(16/28) = 1, under min_pixels:
	// beta = sqrt(3136/128) = 4.95, ceil(1.41) = 2 -> 56, ceil(2.83) = 3 -> 84;
	// (4 x 6) / 4 = 6 tokens.
	const perImage = 6
	var blank string
	for i, r := range rows {
		idx := py.Choices(53, 5)
		ids := make([]int, 5)
		for j, k := range idx {
			ids[j] = 7 + k
		}
		text := tok.Decode(ids)
		want := "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|><|vision_start|><|image_pad|><|vision_end|>" + text + "<|im_end|>\n<|im_start|>assistant\n"
		if r.Text != want {
			t.Errorf("row %d text %q, want %q", i, r.Text, want)
		}
		// Text only: im_start user 5 words im_end im_start assistant.
		if r.TextPromptLen != 10 || r.VisionPromptLen != 2*(2+perImage) || r.PromptLen != 10+2*(2+perImage) || r.OutputLen != 4 {
			t.Errorf("row %d lens %d %d %d %d", i, r.PromptLen, r.TextPromptLen, r.VisionPromptLen, r.OutputLen)
		}
		if len(r.Images) != 2 {
			t.Fatalf("row %d: %d images", i, len(r.Images))
		}
		img := decodeURI(t, r.Images[0], "png")
		if b := img.Bounds(); b.Dx() != 16 || b.Dy() != 8 || rgb(img, 15, 7) != [3]uint8{255, 255, 255} {
			t.Errorf("image %v", b)
		}
		blank = r.Images[0]
	}
	wantOut := fmt.Sprintf(`Vision tokens: Qwen2-VL smart resize (patch 14, merge 2, 3136 to 12845056 pixels) from %s/preprocessor_config.json.
#Input tokens: 78
#Output tokens: 12
#Total images: 6
#Images per request: 2 (fixed)

=== Token Breakdown (per request avg / total) ===
  Raw text prompt tokens (without overhead): avg=5.0, total=15
  Text prompt tokens (with chat template): avg=10.0, total=30
  Text prompt overhead: avg=5.0, total=15
  Vision tokens: avg=16.0, total=48

Created 3 blank png images with average %d bytes per request
`, dir, 2*len(blank))
	if out.String() != wantOut {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), wantOut)
	}

	// The native backend sends the templated prompt and image_data.
	c, err := backend.New("sglang", "http://x", backend.Options{Stream: true, IgnoreEOS: true, TopP: 1, LogprobStartLen: -1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	body := string(c.Body(&backend.Input{Text: r.Text, Images: r.Images, OutputLen: r.OutputLen, PromptLen: r.PromptLen}))
	wantBody := `{"text": ` + jsonStr(r.Text) + `, "sampling_params": {"temperature": 0.0, "max_new_tokens": 4, "ignore_eos": true}, "stream": true, "lora_path": null, "return_logprob": false, "return_routed_experts": false, "logprob_start_len": -1, "image_data": [` + jsonStr(blank) + `, ` + jsonStr(blank) + `]}`
	if body != wantBody {
		t.Errorf("native body\n%.300s\nwant\n%.300s", body, wantBody)
	}

	// A chat backend gets the raw text after the image_url parts.
	out.Reset()
	env = Env{Tok: tok, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42), Out: &out}
	rows, err = Load(context.Background(), imageParams(dir, "sglang-oai-chat"), env)
	if err != nil {
		t.Fatal(err)
	}
	c, _ = backend.New("sglang-oai-chat", "http://x", backend.Options{Stream: true, IgnoreEOS: true, TopP: 1, LogprobStartLen: -1}, nil, nil)
	r = rows[0]
	body = string(c.Body(&backend.Input{Text: r.Text, Images: r.Images, OutputLen: r.OutputLen, Model: "m"}))
	part := `{"type": "image_url", "image_url": {"url": ` + jsonStr(blank) + `}}`
	wantBody = `{"model": "m", "messages": [{"role": "user", "content": [` + part + `, ` + part + `, {"type": "text", "text": ` + jsonStr(r.Text) + `}]}], "max_completion_tokens": 4, "stream": true, "temperature": 0.0, "ignore_eos": true, "stream_options": {"include_usage": true}}`
	if body != wantBody {
		t.Errorf("chat body\n%.300s\nwant\n%.300s", body, wantBody)
	}
	if strings.Contains(r.Text, "<|im_start|>") || len(strings.Fields(r.Text)) != 5 {
		t.Errorf("chat text %q", r.Text)
	}
}

func jsonStr(s string) string { return string(pyjson.String(s)) }

func TestLoadImageRandomCountsAndResolution(t *testing.T) {
	var out bytes.Buffer
	p := Params{Name: "image", Backend: backendOf("sglang-oai-chat"), NumPrompts: 4, RandomInputLen: 3, RandomOutputLen: 2,
		ImageCount: 3, RandomImageCount: true, ImageResolution: "random:2x2-4x6", ImageFormat: "jpeg", ImageContent: "random"}
	rows, err := Load(context.Background(), p, testEnv(9, &out))
	if err != nil {
		t.Fatal(err)
	}
	// The reference's order: image counts, input lengths, output lengths.
	ref := pyrand.NewNumPy(9)
	counts := ref.RandInts(1, 4, 4)
	ins := ref.RandInts(1, 4, 4)
	total := 0
	for i, r := range rows {
		if len(r.Images) != int(counts[i]) {
			t.Errorf("row %d: %d images, want %d", i, len(r.Images), counts[i])
		}
		total += len(r.Images)
		if got := len(strings.Fields(r.Text)); got != int(ins[i]) {
			t.Errorf("row %d: %d words, want %d", i, got, ins[i])
		}
	}
	lines := strings.Split(out.String(), "\n")
	want := []string{
		fmt.Sprintf("#Total images: %d", total),
		fmt.Sprintf("#Images per request: min=%d, max=%d, mean=%.2f", minOf(counts), maxOf(counts), float64(total)/4),
	}
	for _, w := range want {
		if !contains(lines, w) {
			t.Errorf("no line %q in:\n%s", w, out.String())
		}
	}
	if !strings.Contains(out.String(), "#Image resolution: min=") || !strings.Contains(out.String(), "Vision tokens: estimated") {
		t.Errorf("printed:\n%s", out.String())
	}
}

func minOf(v []int64) int64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []int64) int64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func TestLoadImageRefuses(t *testing.T) {
	base := Params{Name: "image", Backend: backendOf("sglang"), NumPrompts: 1, ImageCount: 1, ImageResolution: "1080p", ImageFormat: "jpeg", ImageContent: "random"}
	for _, tt := range []struct {
		edit func(*Params)
		want string
	}{
		{func(p *Params) { p.Backend = backendOf("vllm") }, "--backend vllm: the image dataset sends images only to sglang, sglang-native, sglang-oai-chat, vllm-chat"},
		{func(p *Params) { p.TokenizePrompt = true }, "--tokenize-prompt: not supported by --dataset-name image"},
		{func(p *Params) { p.ImageCount = 0 }, "--image-count 0: must be at least 1"},
		{func(p *Params) { p.ImageFormat = "webp" }, "--image-format webp: choose jpeg or png"},
		{func(p *Params) { p.ImageContent = "noise" }, "--image-content noise: choose random or blank"},
		{func(p *Params) { p.ImageResolution = "big" }, "--image-resolution big: unsupported resolution"},
	} {
		p := base
		tt.edit(&p)
		_, err := Load(context.Background(), p, testEnv(1, &bytes.Buffer{}))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("err %v, want %q", err, tt.want)
		}
	}
}

// BenchmarkImage1080p is one 1080p random JPEG request: the NumPy draws and
// the encoding.
func BenchmarkImage1080p(b *testing.B) {
	np := pyrand.NewNumPy(1)
	spec := imageSpec{format: "jpeg", res: imageRes{minW: 1920, minH: 1080, maxW: 1920, maxH: 1080}}
	for b.Loop() {
		if _, err := makeImages(nil, spec, 4, np); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(4*b.N), "ms/image")
}

func FuzzParseImageRes(f *testing.F) {
	for _, s := range []string{"1080p", "1080x1920", "random:256x256-720x1280", "random:1x1-", "x", "99999999999999999999x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseImageRes(s)
		if err != nil {
			return
		}
		if r.minW < 1 || r.minH < 1 || r.minW > r.maxW || r.minH > r.maxH || r.maxW*r.maxH > maxImagePixels {
			t.Errorf("%q gave %+v", s, r)
		}
	})
}
