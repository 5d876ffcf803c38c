package tokenizer

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalizer is a tokenizer.json normalizer. first says whether s starts at
// the beginning of the input; normalize returns whether the result still
// does (it stops doing so when leading characters are removed).
type normalizer interface {
	normalize(s string, first bool) (string, bool)
}

func parseNormalizer(raw []byte) (normalizer, error) {
	typ, err := componentType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		seq, err := parseSequence(raw, "normalizers", parseNormalizer)
		if err != nil {
			return nil, err
		}
		return normSequence(seq), nil
	case "NFC":
		return unicodeNorm{norm.NFC}, nil
	case "NFD":
		return unicodeNorm{norm.NFD}, nil
	case "NFKC":
		return unicodeNorm{norm.NFKC}, nil
	case "NFKD":
		return unicodeNorm{norm.NFKD}, nil
	case "Lowercase":
		return lowercase{}, nil
	case "StripAccents":
		return stripAccents{}, nil
	case "Nmt":
		return nmt{}, nil
	case "ByteLevel":
		return byteLevelNorm{}, nil
	case "Strip":
		var c struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		return strip{c.Left, c.Right}, nil
	case "Prepend":
		var c struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		return prepend{c.Prepend}, nil
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
			return nil, err
		}
		return replace{m, c.Content}, nil
	case "BertNormalizer", "Bert":
		c := struct {
			CleanText          *bool `json:"clean_text"`
			HandleChineseChars *bool `json:"handle_chinese_chars"`
			StripAccents       *bool `json:"strip_accents"`
			Lowercase          *bool `json:"lowercase"`
		}{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		b := bertNorm{cleanText: true, chinese: true, lowercase: true}
		setBool(&b.cleanText, c.CleanText)
		setBool(&b.chinese, c.HandleChineseChars)
		setBool(&b.lowercase, c.Lowercase)
		b.stripAccents = b.lowercase
		setBool(&b.stripAccents, c.StripAccents)
		return b, nil
	}
	return nil, &unsupportedError{"normalizer", typ}
}

func setBool(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

type normSequence []normalizer

func (q normSequence) normalize(s string, first bool) (string, bool) {
	for _, n := range q {
		s, first = n.normalize(s, first)
	}
	return s, first
}

type unicodeNorm struct{ f norm.Form }

func (u unicodeNorm) normalize(s string, first bool) (string, bool) {
	if u.f.IsNormalString(s) {
		return s, first
	}
	return u.f.String(s), first
}

// mapRunes rewrites s rune by rune: f returns the replacement text, or
// drop. It reports whether the first rune was dropped.
func mapRunes(s string, f func(r rune, b *strings.Builder) bool) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	droppedFirst := false
	for i, r := range s {
		if !f(r, &b) && i == 0 {
			droppedFirst = true
		}
	}
	return b.String(), droppedFirst
}

type lowercase struct{}

func (lowercase) normalize(s string, first bool) (string, bool) {
	return toLowerRust(s), first
}

// toLowerRust lowercases as Rust's char::to_lowercase does, character by
// character: like strings.ToLower except for U+0130, whose full lowercase
// is two characters.
func toLowerRust(s string) string {
	ascii := true
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		upper = upper || c >= 'A' && c <= 'Z'
	}
	if ascii {
		if !upper {
			return s
		}
		return strings.ToLower(s)
	}
	if !strings.ContainsRune(s, 0x130) {
		return strings.ToLower(s)
	}
	out, _ := mapRunes(s, func(r rune, b *strings.Builder) bool {
		if r == 0x130 {
			b.WriteString("i\u0307")
		} else {
			b.WriteRune(unicode.ToLower(r))
		}
		return true
	})
	return out
}

type stripAccents struct{}

func (stripAccents) normalize(s string, first bool) (string, bool) {
	out, dropped := mapRunes(s, func(r rune, b *strings.Builder) bool {
		if unicode.Is(combiningMark, r) {
			return false
		}
		b.WriteRune(r)
		return true
	})
	return out, first && !dropped
}

type strip struct{ left, right bool }

func (st strip) normalize(s string, first bool) (string, bool) {
	if st.left {
		t := strings.TrimLeftFunc(s, unicode.IsSpace)
		if len(t) != len(s) {
			first = false
		}
		s = t
	}
	if st.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s, first
}

type prepend struct{ s string }

func (p prepend) normalize(s string, first bool) (string, bool) {
	if s == "" {
		return s, first
	}
	return p.s + s, first
}

type replace struct {
	m       matcher
	content string
}

func (r replace) normalize(s string, first bool) (string, bool) {
	var b strings.Builder
	last := 0
	r.m.matches(s, func(start, end int) {
		if start == 0 && end > 0 && r.content == "" {
			first = false
		}
		b.WriteString(s[last:start])
		b.WriteString(r.content)
		last = end
	})
	if last == 0 && b.Len() == 0 {
		return s, first
	}
	b.WriteString(s[last:])
	return b.String(), first
}

type nmt struct{}

func (nmt) normalize(s string, first bool) (string, bool) {
	out, dropped := mapRunes(s, func(r rune, b *strings.Builder) bool {
		switch {
		case r >= 1 && r <= 8, r == 0x0B, r >= 0x0E && r <= 0x1F, r == 0x7F, r == 0x8F, r == 0x9F:
			return false
		case r == 0x09, r == 0x0A, r == 0x0C, r == 0x0D, r == 0x1680, r >= 0x200B && r <= 0x200F,
			r == 0x2028, r == 0x2029, r == 0x2581, r == 0xFEFF, r == 0xFFFD:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
		return true
	})
	return out, first && !dropped
}

type byteLevelNorm struct{}

func (byteLevelNorm) normalize(s string, first bool) (string, bool) {
	return string(appendByteLevel(nil, s)), first
}

// bertNorm is BertNormalizer.
type bertNorm struct {
	cleanText, chinese, stripAccents, lowercase bool
}

func (n bertNorm) normalize(s string, first bool) (string, bool) {
	if n.cleanText {
		var dropped bool
		s, dropped = mapRunes(s, func(r rune, b *strings.Builder) bool {
			if r == 0 || r == 0xFFFD || isBertControl(r) {
				return false
			}
			if r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r) {
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
			return true
		})
		first = first && !dropped
	}
	if n.chinese {
		s, _ = mapRunes(s, func(r rune, b *strings.Builder) bool {
			if isChineseChar(r) {
				b.WriteByte(' ')
				b.WriteRune(r)
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
			return true
		})
	}
	if n.stripAccents {
		var dropped bool
		s, dropped = mapRunes(norm.NFD.String(s), func(r rune, b *strings.Builder) bool {
			if unicode.Is(bertNonspacing, r) {
				return false
			}
			b.WriteRune(r)
			return true
		})
		first = first && !dropped
	}
	if n.lowercase {
		s = toLowerRust(s)
	}
	return s, first
}

// isBertControl is the library's is_control: \t, \n and \r aside, the
// unicode_categories crate's is_other, which (its documentation
// notwithstanding) is Cc, Cf and Co only. Unassigned code points (Cn),
// noncharacters such as U+FFFF and U+10FFFF included, are kept, so the model
// sees them (WordPiece maps such a word to its unknown token). The crate's
// tables are Unicode 8.0's, so Cf is bertFormat, not the newer unicode.Cf.
func isBertControl(r rune) bool {
	if r < utf8.RuneSelf {
		return (r < 0x20 || r == 0x7F) && r != '\t' && r != '\n' && r != '\r'
	}
	if r <= 0x9F {
		return true // the C1 controls
	}
	return r >= 0xE000 && r <= 0xF8FF || r >= 0xF0000 && r <= 0xFFFFD || r >= 0x100000 && r <= 0x10FFFD ||
		unicode.Is(bertFormat, r)
}

func isChineseChar(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}
