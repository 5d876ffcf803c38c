package sim

import (
	"bytes"
	"encoding/json"
	"hash/fnv"

	"benchserve/internal/vision"
)

// imageTokens is how many prompt tokens an image becomes, counted as the
// client estimates them when the model's processor is unknown
// (vision.Estimate), so that a rehearsal of an image run has the totals
// the client expects. An image that cannot be read (a URL, not a data URI)
// counts nothing.
func imageTokens(uri string) int {
	w, h, ok := vision.DataURISize(uri)
	if !ok {
		return 0
	}
	return vision.Estimate(w, h)
}

// appendImage appends the vision tokens of an image to ids. They count in
// prompt_tokens; their ids matter only to the prefix cache, which, as a
// real server's, should match an image only with itself: all are one id
// from a hash of the image.
func appendImage(ids []int, uri string) []int {
	n := imageTokens(uri)
	if n == 0 {
		return ids
	}
	h := fnv.New32a()
	h.Write([]byte(uri))
	id := int(h.Sum32() & (1<<30 - 1))
	for range n {
		ids = append(ids, id)
	}
	return ids
}

// imagePart is the image of a content part, in each API's shape: OpenAI
// chat's {"type": "image_url", "image_url": {"url"}}, the Responses API's
// {"type": "input_image", "image_url": "..."}, Anthropic's
// {"type": "image", "source": {"type": "base64", "media_type", "data"}}.
type imagePart struct {
	ImageURL json.RawMessage `json:"image_url"`
	Source   *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

// uri is the part's image as a URL ("" when it has none).
func (p imagePart) uri() string {
	if s := p.Source; s != nil {
		if s.Type == "base64" {
			return "data:" + s.MediaType + ";base64," + s.Data
		}
		return s.URL
	}
	raw := bytes.TrimSpace(p.ImageURL)
	var u string
	switch {
	case len(raw) == 0:
	case raw[0] == '"':
		json.Unmarshal(raw, &u)
	default:
		var o struct {
			URL string `json:"url"`
		}
		json.Unmarshal(raw, &o)
		u = o.URL
	}
	return u
}

// imageData appends the vision tokens of SGLang's image_data (one URI or
// a list of them) to ids.
func imageData(ids []int, raw json.RawMessage) []int {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return ids
	}
	var uris []string
	if raw[0] == '"' {
		var u string
		json.Unmarshal(raw, &u)
		uris = []string{u}
	} else {
		json.Unmarshal(raw, &uris)
	}
	for _, u := range uris {
		ids = appendImage(ids, u)
	}
	return ids
}
