package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/internal/vision"
	"benchserve/tokenizer"
)

// vlmTemplate renders image parts as Qwen2-VL's template does.
const vlmTemplate = `{% for message in messages %}<|im_start|>{{ message['role'] }}
{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}`

// vlmSpecial are the tiny model's special tokens, ids 0 to 6.
var vlmSpecial = []string{"<s>", "<unk>", "<|im_start|>", "<|im_end|>", "<|image_pad|>", "<|vision_start|>", "<|vision_end|>"}

// tinyVLM writes a small Qwen2-VL-like model directory: a word-level
// tokenizer (the special tokens above, then "user", "assistant", and w0 to
// w49), its chat template, and preprocessor_config.json with pre. It
// returns the directory and the tokenizer.
func tinyVLM(t testing.TB, pre string) (string, *tokenizer.Pretrained) {
	t.Helper()
	dir := t.TempDir()
	vocab := map[string]int{}
	var added []string
	for i, s := range vlmSpecial {
		vocab[s] = i
		added = append(added, fmt.Sprintf(`{"id": %d, "content": %q, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}`, i, s))
	}
	for _, w := range []string{"user", "assistant", "system"} {
		vocab[w] = len(vocab)
	}
	for i := range 50 {
		vocab[fmt.Sprintf("w%d", i)] = len(vocab)
	}
	vj, _ := json.Marshal(vocab)
	tok := fmt.Sprintf(`{"version": "1.0", "added_tokens": [%s], "normalizer": null, "pre_tokenizer": {"type": "WhitespaceSplit"},
"post_processor": null, "decoder": null, "model": {"type": "WordLevel", "vocab": %s, "unk_token": "<unk>"}}`, strings.Join(added, ", "), vj)
	tmpl, _ := json.Marshal(vlmTemplate)
	cfg := fmt.Sprintf(`{"bos_token": null, "eos_token": "<|im_end|>", "unk_token": "<unk>", "chat_template": %s}`, tmpl)
	for name, data := range map[string]string{"tokenizer.json": tok, "tokenizer_config.json": cfg} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if pre != "" {
		if err := os.WriteFile(filepath.Join(dir, "preprocessor_config.json"), []byte(pre), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := tokenizer.LoadFiles(dir, tokenizer.Files{Tokenizer: filepath.Join(dir, "tokenizer.json"), Config: filepath.Join(dir, "tokenizer_config.json")})
	if err != nil {
		t.Fatal(err)
	}
	return dir, p
}

const qwenPre = `{"image_processor_type": "Qwen2VLImageProcessor", "processor_class": "Qwen2_5_VLProcessor",
"patch_size": 14, "merge_size": 2, "temporal_patch_size": 2, "min_pixels": 3136, "max_pixels": 12845056}`

func TestSmartResize(t *testing.T) {
	// Worked by hand from transformers' smart_resize.
	for _, tt := range []struct {
		h, w, minPx, maxPx int
		wantH, wantW       int
	}{
		// 1080p fits 12845056: round each side to 28 (38.57 -> 39, 68.57 -> 69).
		{1080, 1920, 3136, 12845056, 1092, 1932},
		// Over 1003520: beta = sqrt(1080*1920/1003520) = 1.4375; floor(26.83) = 26, floor(47.70) = 47.
		{1080, 1920, 3136, 1003520, 728, 1316},
		// Python rounds half to even: 42/28 = 1.5 -> 2, 70/28 = 2.5 -> 2.
		{42, 70, 3136, 12845056, 56, 56},
		// Under min_pixels: beta = sqrt(3136/400) = 2.8; ceil(2.0) = 2 -> 56.
		{20, 20, 3136, 12845056, 56, 56},
	} {
		h, w := smartResize(tt.h, tt.w, 28, tt.minPx, tt.maxPx)
		if h != tt.wantH || w != tt.wantW {
			t.Errorf("smartResize(%d, %d, max %d) = %dx%d, want %dx%d", tt.h, tt.w, tt.maxPx, h, w, tt.wantH, tt.wantW)
		}
	}
}

func TestVisionFromConfig(t *testing.T) {
	parse := func(s string) processorConfig {
		var c processorConfig
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tt := range []struct {
		name      string
		pre, proc string
		w, h      int
		want      int // -1: unknown formula
		token     string
	}{
		{"qwen2.5-vl", qwenPre, `{}`, 1920, 1080, 78 * 138 / 4, "<|image_pad|>"},
		{"qwen2-vl defaults", `{"image_processor_type": "Qwen2VLImageProcessorFast"}`, `{}`, 1920, 1080, 52 * 94 / 4, "<|image_pad|>"},
		{"qwen3-vl size dict", `{"image_processor_type": "Qwen2VLImageProcessorFast", "patch_size": 16, "merge_size": 2,
			"size": {"longest_edge": 16777216, "shortest_edge": 65536}}`, `{}`, 640, 360,
			// factor 32: round(360/32) = 11 -> 352, round(640/32) = 20 -> 640; 22 * 40 / 4.
			22 * 40 / 4, "<|image_pad|>"},
		{"llava", `{"image_processor_type": "CLIPImageProcessor", "processor_class": "LlavaProcessor",
			"crop_size": {"height": 336, "width": 336}, "size": {"shortest_edge": 336}}`,
			`{"image_token": "<image>", "num_additional_image_tokens": 1, "patch_size": 14, "processor_class": "LlavaProcessor",
			"vision_feature_select_strategy": "default"}`, 1920, 1080, 576, "<image>"},
		{"llava full strategy", `{"processor_class": "LlavaProcessor", "crop_size": {"height": 224, "width": 224}}`,
			`{"patch_size": 14, "vision_feature_select_strategy": "full"}`, 10, 10, 256, "<image>"},
		{"paligemma", `{"image_processor_type": "SiglipImageProcessor", "image_seq_length": 256}`, `{}`, 1920, 1080, 256, "<image>"},
		{"unknown", `{"image_processor_type": "IdeficsImageProcessor"}`, `{}`, 1920, 1080, -1, ""},
		{"llava without patch size", `{"processor_class": "LlavaProcessor", "crop_size": {"height": 336, "width": 336}}`, `{}`, 1, 1, -1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := visionFromConfig(parse(tt.pre), parse(tt.proc), "x")
			if tt.want < 0 {
				if v != nil {
					t.Fatalf("got a formula (%s), want none", v.desc)
				}
				return
			}
			if v == nil {
				t.Fatal("no formula")
			}
			if got := v.perImage(tt.w, tt.h); got != tt.want || v.imageToken != tt.token || !v.exact {
				t.Errorf("perImage(%d, %d) = %d, token %q, exact %v; want %d, %q, true", tt.w, tt.h, got, v.imageToken, v.exact, tt.want, tt.token)
			}
		})
	}
}

func TestLoadVision(t *testing.T) {
	ctx := context.Background()
	dir, _ := tinyVLM(t, qwenPre)
	v, err := loadVision(ctx, Params{Model: dir}, Env{})
	if err != nil || !v.exact || v.perImage(1920, 1080) != 2691 {
		t.Fatalf("local dir: %+v, %v", v, err)
	}

	// A Hub id goes through Fetch; a missing file gives the estimate.
	var asked []string
	fetch := func(_ context.Context, typ, repo, file string) (string, error) {
		asked = append(asked, typ+" "+repo+" "+file)
		if file == "preprocessor_config.json" {
			return filepath.Join(dir, file), nil
		}
		return "", errors.New("404 Not Found")
	}
	v, err = loadVision(ctx, Params{Model: "Qwen/Qwen2.5-VL-7B-Instruct"}, Env{Fetch: fetch})
	if err != nil || !v.exact {
		t.Fatalf("hub: %+v, %v", v, err)
	}
	if strings.Join(asked, "; ") != "model Qwen/Qwen2.5-VL-7B-Instruct preprocessor_config.json; model Qwen/Qwen2.5-VL-7B-Instruct processor_config.json" {
		t.Errorf("fetched %q", asked)
	}
	v, err = loadVision(ctx, Params{Model: "org/text-only"}, Env{Fetch: func(context.Context, string, string, string) (string, error) {
		return "", errors.New("hub: org/text-only/preprocessor_config.json: 404 Not Found")
	}})
	if err != nil || v.exact || !strings.Contains(v.desc, "could not be read (404 Not Found)") {
		t.Errorf("missing file: %+v, %v", v, err)
	}
	// A served name that is not a Hub id is not looked up.
	v, _ = loadVision(ctx, Params{Model: "default"}, Env{Fetch: fetch})
	if v.exact || len(asked) != 2 {
		t.Errorf("bare name: exact %v, fetched %q", v.exact, asked)
	}
	if v.perImage(1920, 1080) != 2691 || v.imageToken != "" {
		t.Errorf("estimate gives %d, token %q", v.perImage(1920, 1080), v.imageToken)
	}

	// A present but broken file is an error naming it.
	bad, _ := tinyVLM(t, `{"image_processor_type": `)
	if _, err := loadVision(ctx, Params{Model: bad}, Env{}); err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "preprocessor_config.json")+": invalid JSON") {
		t.Errorf("broken config: %v", err)
	}
}

func TestMMRow(t *testing.T) {
	dir, tok := tinyVLM(t, qwenPre)
	v, err := loadVision(context.Background(), Params{Model: dir}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	imgs := []mmImage{{uri: "data:image/png;base64,AA==", w: 1920, h: 1080}, {uri: "data:image/png;base64,AQ==", w: 640, h: 360}}
	var out strings.Builder
	b := newMMRows(tok, v, false, &out)
	if b.padID != 4 {
		t.Fatalf("image_pad id %d", b.padID)
	}
	r := b.row("w1 w2 w3", imgs, 9)
	wantText := "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|><|vision_start|><|image_pad|><|vision_end|>w1 w2 w3<|im_end|>\n<|im_start|>assistant\n"
	if r.Text != wantText {
		t.Errorf("text %q\nwant %q", r.Text, wantText)
	}
	// Text only: im_start user w1 w2 w3 im_end im_start assistant = 8 tokens.
	// With images: 8 + 2 x (start, end) + each image's tokens (2691; 360p:
	// round(360/28) = 13 -> 364, round(640/28) = 23 -> 644; 26 * 46 / 4 = 299).
	if r.TextPromptLen != 8 || r.PromptLen != 8+4+2691+299 || r.VisionPromptLen != 4+2691+299 || r.OutputLen != 9 {
		t.Errorf("lens prompt %d text %d vision %d out %d", r.PromptLen, r.TextPromptLen, r.VisionPromptLen, r.OutputLen)
	}
	if len(r.Images) != 2 || r.Images[1] != imgs[1].uri {
		t.Errorf("images %q", r.Images)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}

	// A chat backend gets the raw text; without a template the prompt is
	// "<image>" + text, said once.
	b = newMMRows(wordTok{}, estimateVision("test"), true, &out)
	r = b.row("w1 w2", imgs[:1], 3)
	r2 := b.row("w3", imgs[:1], 3)
	if r.Text != "w1 w2" || r2.Text != "w3" {
		t.Errorf("raw text %q, %q", r.Text, r2.Text)
	}
	// "<image>w1 w2" is 2 words plus BOS; the text alone the same.
	if r.PromptLen != 3+2691 || r.TextPromptLen != 3 {
		t.Errorf("fallback lens %d %d", r.PromptLen, r.TextPromptLen)
	}
	if got := strings.Count(out.String(), "fallback to <image> tag"); got != 1 {
		t.Errorf("fallback said %d times: %q", got, out.String())
	}
}

// A template without image support prints the content list, image stubs
// and all, as text. Those words must not count on top of the vision
// tokens: the row is the text-only template's, plus the images' tokens.
func TestMMRowTextOnlyTemplate(t *testing.T) {
	tok := chatWordTok(t, wordChatTemplate)
	var out strings.Builder
	v := estimateVision("test")
	b := newMMRows(tok, v, false, &out)
	imgs := []mmImage{{uri: "data:image/png;base64,AAAA", w: 100, h: 100}, {uri: "data:image/jpeg;base64,AQ==", w: 640, h: 360}}
	r := b.row("w1 w2", imgs, 3)
	// "<s><|user|> w1 w2 <|assistant|>": BOS (added), <s>, user, w1, w2,
	// assistant. 100x100 is 112x112 resized, 16 tokens; 360p 299.
	vision := v.perImage(100, 100) + v.perImage(640, 360)
	if vision != 16+299 {
		t.Fatalf("estimate gives %d", vision)
	}
	if r.Text != "<s><|user|> w1 w2 <|assistant|>" || strings.Contains(r.Text, "base64") {
		t.Errorf("text %q", r.Text)
	}
	if r.TextPromptLen != 6 || r.PromptLen != 6+vision || r.VisionPromptLen != vision {
		t.Errorf("lens prompt %d text %d vision %d, want %d %d %d", r.PromptLen, r.TextPromptLen, r.VisionPromptLen, 6+vision, 6, vision)
	}
	b.row("w3", imgs[:1], 3)
	if got := strings.Count(out.String(), "has no image support"); got != 1 {
		t.Errorf("said %d times: %q", got, out.String())
	}
}

// The client's estimate is vision.Estimate, the count the simulator gives
// image parts: a --sim rehearsal of an image run has matching totals.
func TestEstimateIsTheSimulators(t *testing.T) {
	est := estimateVision("test")
	for _, s := range [][2]int{{640, 480}, {1, 1}, {4000, 3000}, {512, 512}, {7000, 100}} {
		if got, want := est.perImage(s[0], s[1]), vision.Estimate(s[0], s[1]); got != want {
			t.Errorf("%dx%d: estimate %d, vision.Estimate %d", s[0], s[1], got, want)
		}
	}
}
