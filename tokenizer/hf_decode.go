package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// decoder is a tokenizer.json decoder: the library's decode_chain, which
// turns token strings into strings that are then joined.
type decoder interface {
	decodeChain(toks []string) []string
}

func parseDecoder(raw []byte) (decoder, error) {
	typ, err := componentType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		seq, err := parseSequence(raw, "decoders", parseDecoder)
		if err != nil {
			return nil, err
		}
		return decSequence(seq), nil
	case "ByteLevel":
		return byteLevelDec{}, nil
	case "ByteFallback":
		return byteFallbackDec{}, nil
	case "Fuse":
		return fuseDec{}, nil
	case "Metaspace":
		p, err := parseMetaspace(raw)
		if err != nil {
			return nil, err
		}
		m := p.(*metaspacePre)
		return metaspaceDec{m.replacement, m.scheme != "never"}, nil
	case "WordPiece":
		c := struct {
			Prefix  *string `json:"prefix"`
			Cleanup *bool   `json:"cleanup"`
		}{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		d := wordPieceDec{prefix: "##", cleanup: true}
		if c.Prefix != nil {
			d.prefix = *c.Prefix
		}
		setBool(&d.cleanup, c.Cleanup)
		return d, nil
	case "Strip":
		var c struct {
			Content string `json:"content"`
			Start   int    `json:"start"`
			Stop    int    `json:"stop"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		if utf8.RuneCountInString(c.Content) != 1 || c.Start < 0 || c.Stop < 0 {
			//lint:ignore ST1005 the tokenizers library's own message (its component's name first)
			return nil, fmt.Errorf("Strip: content %q is not one character", c.Content)
		}
		r, _ := utf8.DecodeRuneInString(c.Content)
		return stripDec{r, c.Start, c.Stop}, nil
	case "Replace":
		var c struct {
			Pattern patternJSON `json:"pattern"`
			Content string      `json:"content"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		m, err := c.Pattern.matcher()
		if err != nil {
			//lint:ignore ST1005 the tokenizers library's own message (its component's name first)
			return nil, fmt.Errorf("Replace: %v", err)
		}
		return replaceDec{replace{m, c.Content}}, nil
	case "BPEDecoder":
		c := struct {
			Suffix *string `json:"suffix"`
		}{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		d := bpeDec{"</w>"}
		if c.Suffix != nil {
			d.suffix = *c.Suffix
		}
		return d, nil
	case "CTC":
		c := struct {
			Pad     *string `json:"pad_token"`
			Delim   *string `json:"word_delimiter_token"`
			Cleanup *bool   `json:"cleanup"`
		}{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		d := ctcDec{pad: "<pad>", delim: "|", cleanup: true}
		if c.Pad != nil {
			d.pad = *c.Pad
		}
		if c.Delim != nil {
			d.delim = *c.Delim
		}
		setBool(&d.cleanup, c.Cleanup)
		return d, nil
	}
	return nil, &unsupportedError{"decoder", typ}
}

type decSequence []decoder

func (q decSequence) decodeChain(toks []string) []string {
	for _, d := range q {
		toks = d.decodeChain(toks)
	}
	return toks
}

// byteLevelDec turns byte-level characters back into bytes; a token with a
// character outside the byte alphabet is kept as it is.
type byteLevelDec struct{}

func (byteLevelDec) decodeChain(toks []string) []string {
	var b []byte
	for _, t := range toks {
		n := len(b)
		ok := true
		for _, r := range t {
			c, in := byteOfLevel(r)
			if !in {
				ok = false
				break
			}
			b = append(b, c)
		}
		if !ok {
			b = append(b[:n], t...)
		}
	}
	return []string{replaceInvalid(string(b))}
}

// byteFallbackDec turns runs of <0xXX> tokens into text; a run that is not
// valid UTF-8 becomes one U+FFFD per byte.
type byteFallbackDec struct{}

func (byteFallbackDec) decodeChain(toks []string) []string {
	out := make([]string, 0, len(toks))
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, t := range toks {
		if b, ok := byteToken(t); ok {
			run = append(run, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

// byteToken parses "<0xXX>" as Rust's u8::from_str_radix(.., 16) would.
func byteToken(t string) (byte, bool) {
	if len(t) != 6 || !strings.HasPrefix(t, "<0x") || t[5] != '>' {
		return 0, false
	}
	h := t[3:5]
	if h[0] == '+' {
		h = h[1:]
	}
	v := 0
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return byte(v), true
}

type fuseDec struct{}

func (fuseDec) decodeChain(toks []string) []string { return []string{strings.Join(toks, "")} }

type metaspaceDec struct {
	replacement rune
	prepend     bool
}

func (m metaspaceDec) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		var b strings.Builder
		for _, r := range t {
			switch {
			case r != m.replacement:
				b.WriteRune(r)
			case i == 0 && m.prepend:
			default:
				b.WriteByte(' ')
			}
		}
		out[i] = b.String()
	}
	return out
}

type wordPieceDec struct {
	prefix  string
	cleanup bool
}

func (w wordPieceDec) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		if i != 0 {
			if rest, ok := strings.CutPrefix(t, w.prefix); ok {
				t = rest
			} else {
				t = " " + t
			}
		}
		if w.cleanup {
			t = wordPieceCleanup(t)
		}
		out[i] = t
	}
	return out
}

// wordPieceCleanup is the library's decoders::wordpiece::cleanup: each
// replacement in turn over the whole string.
func wordPieceCleanup(s string) string {
	for _, r := range [][2]string{{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
		{" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

type stripDec struct {
	content     rune
	start, stop int
}

func (d stripDec) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		rs := []rune(t)
		from := 0
		for j := 0; j < d.start && j < len(rs) && rs[j] == d.content; j++ {
			from = j + 1
		}
		to := len(rs)
		for j := 0; j < d.stop && len(rs)-j-1 >= 0 && rs[len(rs)-j-1] == d.content; j++ {
			to = len(rs) - j - 1
		}
		if to < from {
			to = from
		}
		out[i] = string(rs[from:to])
	}
	return out
}

type replaceDec struct{ r replace }

func (d replaceDec) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i], _ = d.r.normalize(t, false)
	}
	return out
}

type bpeDec struct{ suffix string }

func (d bpeDec) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		repl := " "
		if i == len(toks)-1 {
			repl = ""
		}
		out[i] = strings.ReplaceAll(t, d.suffix, repl)
	}
	return out
}

type ctcDec struct {
	pad, delim string
	cleanup    bool
}

func (d ctcDec) decodeChain(toks []string) []string {
	var out []string
	for i, t := range toks {
		if i > 0 && t == toks[i-1] {
			continue
		}
		t = strings.ReplaceAll(t, d.pad, "")
		if d.cleanup {
			t = strings.ReplaceAll(wordPieceCleanup(t), d.delim, " ")
		}
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}
