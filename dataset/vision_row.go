package dataset

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"benchserve/internal/py/pyjson"
	"benchserve/tokenizer"
)

// mmRawText reports whether b gets the raw text and image_url parts
// (ImagesChat: its server applies the template) rather than the templated
// prompt holding the image placeholders and image_data (ImagesNative, and
// an unknown backend, as the reference's default sglang), or an error
// naming --backend when the image datasets cannot send to it.
func mmRawText(dataset string, b Backend) (bool, error) {
	switch {
	case b.Name == "":
		return false, nil
	case b.Images == ImagesNone:
		return false, fmt.Errorf("--backend %s: the %s dataset sends images only to %s (as the reference tool)",
			b.Name, dataset, strings.Join(b.ImageNames, ", "))
	}
	return b.Images == ImagesChat, nil
}

// mmImage is one image of a request: its data URI and size in pixels.
type mmImage struct {
	uri  string
	w, h int
}

// mmRows builds the rows of the image datasets as the reference's
// create_mm_data_row does, with our vision token counts in place of the
// Python processor's.
type mmRows struct {
	tok    tokenizer.Tokenizer
	chat   tokenizer.ChatTemplater // nil: the tokenizer has no templates
	vision *visionTokens
	padID  int // the image placeholder's id, -1 when unknown
	raw    bool
	out    io.Writer
	warn   sync.Once
	asText sync.Once
}

// tokenIDer is the part of a Hugging Face tokenizer that maps a token's
// text to its id.
type tokenIDer interface {
	TokenToID(tok string) (int, bool)
}

func newMMRows(tok tokenizer.Tokenizer, vision *visionTokens, raw bool, out io.Writer) *mmRows {
	b := &mmRows{tok: tok, vision: vision, padID: -1, raw: raw, out: out}
	b.chat, _ = tok.(tokenizer.ChatTemplater)
	if ti, ok := tok.(tokenIDer); ok && vision.imageToken != "" {
		if id, ok := ti.TokenToID(vision.imageToken); ok {
			b.padID = id
		}
	}
	return b
}

// imageMessage is the user message of the prompt: one image part per
// image, then the text, as the reference builds it. The template gets the
// data URI's header only ("data:image/png;base64,..."): templates place a
// marker for an image rather than print its URL, and parsing megabytes of
// base64 for every request would cost more than making the image.
func imageMessage(text string, imgs []mmImage) []byte {
	b := []byte(`{"role": "user", "content": [`)
	for _, img := range imgs {
		b = append(b, `{"type": "image", "image": {"url": `...)
		head, _, _ := strings.Cut(img.uri, ",")
		b = pyjson.AppendString(b, head+urlStub)
		b = append(b, "}}, "...)
	}
	b = append(b, `{"type": "text", "text": `...)
	b = pyjson.AppendString(b, text)
	return append(b, "}]}"...)
}

// urlStub ends each image URL the template sees.
const urlStub = ",..."

// row builds one request's row. Safe for concurrent use.
//
// prompt_len is the templated prompt's tokens with each image placeholder
// replaced by the image's vision tokens (and the vision tokens added when
// the prompt has no placeholder); text_prompt_len the text-only templated
// prompt's tokens; vision_prompt_len the difference. Both counts encode
// with special tokens, as the processor does.
func (b *mmRows) row(text string, imgs []mmImage, outputLen int) Row {
	opt := tokenizer.ChatOptions{AddGenerationPrompt: true}
	prompt := ""
	var err error
	if b.chat != nil {
		prompt, err = b.chat.ApplyChatTemplate([]tokenizer.Message{{Raw: imageMessage(text, imgs)}}, opt)
	} else {
		err = fmt.Errorf("tokenizer %s has no chat template", b.tok.Name())
	}
	if err != nil {
		b.warn.Do(func() { fmt.Fprintf(b.out, "Error applying chat template: %v, fallback to <image> tag\n", err) })
		prompt = "<image>" + text
	}
	textOnly := text
	if b.chat != nil {
		if s, err := b.chat.ApplyChatTemplate([]tokenizer.Message{{Role: "user", Content: text}}, opt); err == nil {
			textOnly = s
		}
	}
	if err == nil && len(imgs) > 0 && strings.Contains(prompt, ";base64"+urlStub) {
		// A template without image support prints the content list as
		// text, stubs and all. Those tokens are not the processor's, and
		// the vision count stands for the images already, so the prompt is
		// the text-only one.
		b.asText.Do(func() {
			fmt.Fprintf(b.out, "The chat template of %s has no image support (it prints image parts as text); the prompts are templated without them\n", b.tok.Name())
		})
		prompt = textOnly
	}
	special := b.tok.NumSpecialTokensToAdd()
	promptLen := 0
	if b.padID >= 0 {
		ids := b.tok.Encode(prompt, true)
		placeholders := 0
		for _, id := range ids {
			if id == b.padID {
				placeholders++
			}
		}
		promptLen = len(ids) - min(placeholders, len(imgs))
	} else {
		promptLen = b.tok.Count(prompt) + special
	}
	for _, img := range imgs {
		promptLen += b.vision.perImage(img.w, img.h)
	}
	textLen := b.tok.Count(textOnly) + special

	r := Row{Text: prompt, PromptLen: promptLen, OutputLen: outputLen, TextPromptLen: textLen, VisionPromptLen: promptLen - textLen}
	if b.raw {
		r.Text = text
	}
	r.Images = make([]string, len(imgs))
	for i, img := range imgs {
		r.Images[i] = img.uri
	}
	return r
}
