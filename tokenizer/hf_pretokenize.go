package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// preTokenizer is a tokenizer.json pre-tokenizer: it cuts a piece into
// smaller ones (empty pieces are dropped by the caller).
type preTokenizer interface {
	split(p piece, emit func(piece))
}

func parsePreTokenizer(raw []byte) (preTokenizer, error) {
	typ, err := componentType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		seq, err := parseSequence(raw, "pretokenizers", parsePreTokenizer)
		if err != nil {
			return nil, err
		}
		return preSequence(seq), nil
	case "ByteLevel":
		c := struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		b := &byteLevelPre{addPrefixSpace: c.AddPrefixSpace, useRegex: true}
		setBool(&b.useRegex, c.UseRegex)
		return b, nil
	case "Metaspace":
		return parseMetaspace(raw)
	case "Whitespace":
		return whitespacePre{}, nil
	case "WhitespaceSplit":
		return splitPre{m: predMatcher(unicode.IsSpace), behavior: removed}, nil
	case "BertPreTokenizer":
		return preSequence{
			splitPre{m: predMatcher(unicode.IsSpace), behavior: removed},
			splitPre{m: predMatcher(isPunct), behavior: isolated},
		}, nil
	case "Punctuation":
		c := struct {
			Behavior *string `json:"behavior"`
		}{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		b := isolated
		if c.Behavior != nil {
			if b, err = parseBehavior(*c.Behavior); err != nil {
				return nil, err
			}
		}
		return splitPre{m: predMatcher(isPunct), behavior: b}, nil
	case "Digits":
		c := struct {
			Individual bool `json:"individual_digits"`
		}{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		b := contiguous
		if c.Individual {
			b = isolated
		}
		return splitPre{m: predMatcher(unicode.IsNumber), behavior: b}, nil
	case "CharDelimiterSplit":
		c := struct {
			Delimiter string `json:"delimiter"`
		}{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		if utf8.RuneCountInString(c.Delimiter) != 1 {
			return nil, fmt.Errorf("CharDelimiterSplit: delimiter %q is not one character", c.Delimiter)
		}
		d, _ := utf8.DecodeRuneInString(c.Delimiter)
		return splitPre{m: predMatcher(func(r rune) bool { return r == d }), behavior: removed}, nil
	case "Split":
		var c struct {
			Pattern  patternJSON `json:"pattern"`
			Behavior string      `json:"behavior"`
			Invert   bool        `json:"invert"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		m, err := c.Pattern.matcher()
		if err != nil {
			//lint:ignore ST1005 the tokenizers library's own message (its component's name first)
			return nil, fmt.Errorf("Split: %v", err)
		}
		b, err := parseBehavior(c.Behavior)
		if err != nil {
			return nil, err
		}
		return splitPre{m: m, behavior: b, invert: c.Invert}, nil
	}
	return nil, &unsupportedError{"pre_tokenizer", typ}
}

type preSequence []preTokenizer

// split feeds p through the steps in turn. The chain of callbacks is built
// once per call, not once per word.
func (q preSequence) split(p piece, emit func(piece)) {
	if len(q) == 0 {
		emit(p)
		return
	}
	next := emit
	for i := len(q) - 1; i >= 1; i-- {
		step, out := q[i], next
		next = func(sub piece) {
			if sub.s != "" {
				step.split(sub, out)
			}
		}
	}
	q[0].split(p, next)
}

// lastByteLevel returns the pre-tokenizer's ByteLevel step when it is the
// last step and the only one.
func lastByteLevel(p preTokenizer) (*byteLevelPre, bool) {
	switch p := p.(type) {
	case *byteLevelPre:
		return p, true
	case preSequence:
		if len(p) == 0 {
			return nil, false
		}
		for _, q := range p[:len(p)-1] {
			if _, ok := q.(*byteLevelPre); ok {
				return nil, false
			}
			if _, ok := q.(preSequence); ok {
				return nil, false
			}
		}
		return lastByteLevel(p[len(p)-1])
	}
	return nil, false
}

// byteLevelRune maps each byte to the printable character GPT-2's
// byte-level BPE uses for it (the library's bytes_char); byteLevelByte
// maps the characters back, below 256+68 (byte+1; 0: none).
var byteLevelRune, byteLevelByte = func() (to [256]rune, from [256 + 68]uint16) {
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			to[b] = rune(b)
		} else {
			to[b] = rune(256 + n)
			n++
		}
		from[to[b]] = uint16(b + 1)
	}
	return
}()

// byteOfLevel is the byte that byte-level character r stands for.
func byteOfLevel(r rune) (byte, bool) {
	if r < 0 || int(r) >= len(byteLevelByte) || byteLevelByte[r] == 0 {
		return 0, false
	}
	return byte(byteLevelByte[r] - 1), true
}

func appendByteLevel(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = utf8.AppendRune(dst, byteLevelRune[s[i]])
	}
	return dst
}

// byteLevelPre is the ByteLevel pre-tokenizer. With raw set it leaves the
// bytes as they are for the model to map (see HF.rawBytes).
type byteLevelPre struct {
	addPrefixSpace bool
	useRegex       bool
	raw            bool
}

func (b *byteLevelPre) split(p piece, emit func(piece)) {
	if b.addPrefixSpace && !strings.HasPrefix(p.s, " ") {
		p.s = " " + p.s
	}
	out := emit
	if !b.raw {
		out = func(q piece) { emit(piece{string(appendByteLevel(nil, q.s)), q.first}) }
	}
	if !b.useRegex {
		out(p)
		return
	}
	splitIsolated(p, fastSplit{gpt2: true}, out)
}

// metaspacePre is the Metaspace pre-tokenizer (SentencePiece's ▁).
type metaspacePre struct {
	replacement rune
	repl        string
	scheme      string // always, first, never
	splitOn     bool
}

func parseMetaspace(raw []byte) (preTokenizer, error) {
	c := struct {
		Replacement    string  `json:"replacement"`
		AddPrefixSpace *bool   `json:"add_prefix_space"`
		PrependScheme  *string `json:"prepend_scheme"`
		Split          *bool   `json:"split"`
	}{}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(c.Replacement) != 1 {
		//lint:ignore ST1005 the tokenizers library's own message (its component's name first)
		return nil, fmt.Errorf("Metaspace: replacement %q is not one character", c.Replacement)
	}
	m := &metaspacePre{repl: c.Replacement, scheme: "always", splitOn: true}
	m.replacement, _ = utf8.DecodeRuneInString(c.Replacement)
	if c.PrependScheme != nil {
		switch *c.PrependScheme {
		case "always", "first", "never":
			m.scheme = *c.PrependScheme
		default:
			//lint:ignore ST1005 the tokenizers library's own message (its component's name first)
			return nil, fmt.Errorf("Metaspace: unknown prepend_scheme %q", *c.PrependScheme)
		}
	}
	if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
		m.scheme = "never"
	}
	setBool(&m.splitOn, c.Split)
	return m, nil
}

func (m *metaspacePre) split(p piece, emit func(piece)) {
	s := strings.ReplaceAll(p.s, " ", m.repl)
	if !strings.HasPrefix(s, m.repl) && (m.scheme == "always" || m.scheme == "first" && p.first) {
		s = m.repl + s
	}
	if !m.splitOn {
		emit(piece{s, p.first})
		return
	}
	r := m.replacement
	splitBehavior(piece{s, p.first}, predMatcher(func(c rune) bool { return c == r }), mergedWithNext, false, emit)
}

// whitespacePre is the Whitespace pre-tokenizer: the matches of
// \w+|[^\w\s]+.
type whitespacePre struct{}

func (whitespacePre) split(p piece, emit func(piece)) {
	s := p.s
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) && !isWord(r) {
			i += n
			continue
		}
		word := isWord(r)
		j := i + n
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if isWord(r) != word || !word && unicode.IsSpace(r) {
				break
			}
			j += n
		}
		emit(piece{s[i:j], p.first && i == 0})
		i = j
	}
}

// isPunct is the library's is_punc: ASCII punctuation or Unicode 8.0's P*.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.Is(bertPunct, r)
}

// predMatcher matches each character for which it returns true.
type predMatcher func(rune) bool

func (f predMatcher) matches(s string, fn func(start, end int)) {
	for i, r := range s {
		if f(r) {
			fn(i, i+utf8.RuneLen(r))
		}
	}
}

// Split behaviours (the library's SplitDelimiterBehavior).
const (
	removed = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(s string) (int, error) {
	switch s {
	case "Removed":
		return removed, nil
	case "Isolated":
		return isolated, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("unknown split behavior %q", s)
}

type splitPre struct {
	m        matcher
	behavior int
	invert   bool
}

func (sp splitPre) split(p piece, emit func(piece)) {
	if sp.behavior == isolated && !sp.invert {
		splitIsolated(p, sp.m, emit)
		return
	}
	splitBehavior(p, sp.m, sp.behavior, sp.invert, emit)
}

// splitIsolated emits the matches and the text between them, in order.
func splitIsolated(p piece, m matcher, emit func(piece)) {
	prev := 0
	m.matches(p.s, func(start, end int) {
		if prev < start {
			emit(piece{p.s[prev:start], p.first && prev == 0})
		}
		if start < end {
			emit(piece{p.s[start:end], p.first && start == 0})
		}
		prev = end
	})
	if prev < len(p.s) {
		emit(piece{p.s[prev:], p.first && prev == 0})
	}
}

type span struct {
	start, end int
	match      bool
}

// splitBehavior is NormalizedString::split: the string cut into matches and
// the text between, then joined or dropped by behaviour.
func splitBehavior(p piece, m matcher, behavior int, invert bool, emit func(piece)) {
	s := p.s
	var spans []span
	prev := 0
	m.matches(s, func(start, end int) {
		if prev != start {
			spans = append(spans, span{prev, start, invert})
		}
		spans = append(spans, span{start, end, !invert})
		prev = end
	})
	if prev != len(s) {
		spans = append(spans, span{prev, len(s), invert})
	}
	var out []span
	switch behavior {
	case isolated:
		out = spans
	case removed:
		for _, sp := range spans {
			if !sp.match {
				out = append(out, sp)
			}
		}
	case contiguous:
		prevMatch := false
		for _, sp := range spans {
			if sp.match == prevMatch && len(out) > 0 {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
	case mergedWithPrevious:
		prevMatch := false
		for _, sp := range spans {
			if sp.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
	case mergedWithNext:
		prevMatch := false
		for i := len(spans) - 1; i >= 0; i-- {
			sp := spans[i]
			if sp.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = sp.start
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	for _, sp := range out {
		if sp.start < sp.end {
			emit(piece{s[sp.start:sp.end], p.first && sp.start == 0})
		}
	}
}
