package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"benchserve/internal/vision"
)

func pngURI(t *testing.T, w, h int) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

// Image parts count as vision tokens, as the client estimates them, in
// every API's shape: the prompt tokens of a request with images are its
// text's plus vision.Estimate of each image.
func TestImagePartsCountAsVisionTokens(t *testing.T) {
	s, url := newTestServer(t, nil)
	img := pngURI(t, 640, 480)
	b64 := strings.TrimPrefix(img, "data:image/png;base64,")
	vis := vision.Estimate(640, 480)
	if vis != 391 { // resized to 644x476: 46x34 patches, merged 2x2
		t.Fatalf("Estimate(640, 480) = %d, want 391", vis)
	}
	text := len(s.tok.Encode("What is in it?", true))
	usage := func(body []byte, key string) int {
		var v struct {
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		n, _ := v.Usage[key].(float64)
		return int(n)
	}
	cases := []struct{ name, path, body, key string }{
		{"chat", "/v1/chat/completions", `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "` + img + `"}}, {"type": "image_url", "image_url": {"url": "` + img + `"}}, {"type": "text", "text": "What is in it?"}]}], "max_tokens": 2}`, "prompt_tokens"},
		{"responses", "/v1/responses", `{"input": [{"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": "` + img + `"}, {"type": "input_image", "image_url": "` + img + `"}, {"type": "input_text", "text": "What is in it?"}]}], "max_output_tokens": 2}`, "input_tokens"},
		{"messages", "/v1/messages", `{"max_tokens": 2, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "` + b64 + `"}}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "` + b64 + `"}}, {"type": "text", "text": "What is in it?"}]}]}`, "input_tokens"},
		{"completions image_data", "/v1/completions", `{"prompt": "What is in it?", "max_tokens": 2, "image_data": ["` + img + `", "` + img + `"]}`, "prompt_tokens"},
	}
	for _, c := range cases {
		r := post(t, url+c.path, c.body)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
		if got := usage(r.body, c.key); got != text+2*vis {
			t.Errorf("%s: %s %d, want %d text + 2 × %d vision", c.name, c.key, got, text, vis)
		}
	}
	// A URL that is not a data URI counts nothing.
	r := post(t, url+"/v1/chat/completions", `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, {"type": "text", "text": "What is in it?"}]}], "max_tokens": 2}`)
	if got := usage(r.body, "prompt_tokens"); got != text {
		t.Errorf("URL image: prompt_tokens %d, want %d", got, text)
	}
}
