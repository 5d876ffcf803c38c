package dataset

import (
	"fmt"
	"strconv"
	"strings"

	"benchserve/tokenizer"
)

// wordTok is a whitespace tokenizer for tests, the same as the one in
// testdata/reference.py: "<s>" is 0 (BOS, added by Encode), "<unk>" 1,
// "w0".."w99" 2..101, any other word <unk>.
type wordTok struct{}

var _ tokenizer.Tokenizer = wordTok{}

func wordID(w string) int {
	switch w {
	case "<s>":
		return 0
	case "<unk>":
		return 1
	}
	if len(w) > 1 && w[0] == 'w' {
		if n, err := strconv.Atoi(w[1:]); err == nil && n >= 0 && n < 100 && strconv.Itoa(n) == w[1:] {
			return n + 2
		}
	}
	return 1
}

func (wordTok) Name() string { return "words" }

func (wordTok) Encode(text string, addSpecial bool) []int {
	f := strings.Fields(text)
	ids := make([]int, 0, len(f)+1)
	if addSpecial {
		ids = append(ids, 0)
	}
	for _, w := range f {
		ids = append(ids, wordID(w))
	}
	return ids
}

func (wordTok) Count(text string) int { return len(strings.Fields(text)) }

func (wordTok) Decode(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case id == 0:
			b.WriteString("<s>")
		case id >= 2 && id < 102:
			b.WriteByte('w')
			b.WriteString(strconv.Itoa(id - 2))
		default:
			b.WriteString("<unk>")
		}
	}
	return b.String()
}

func (wordTok) VocabSize() int             { return 102 }
func (wordTok) NumSpecialTokensToAdd() int { return 1 }
func (wordTok) BOSToken() string           { return "<s>" }

// lcg is the generator behind makeShareGPT, shared with reference.py.
type lcg struct{ state uint32 }

func (g *lcg) next(m int) int {
	g.state = (g.state*1103515245 + 12345) & 0x7fffffff
	return int(g.state>>8) % m
}

// genWords writes count words as raw JSON string content, mixing escaped
// and plain separators, escaped quotes and non-ASCII words.
func (g *lcg) genWords(count int) string {
	var b strings.Builder
	for i := range count {
		if i > 0 {
			switch g.next(8) {
			case 0:
				b.WriteString(`\n`)
			case 1:
				b.WriteString(`\u0020`)
			default:
				b.WriteString(" ")
			}
		}
		switch g.next(20) {
		case 0:
			b.WriteString(`x\"y`)
		case 1:
			b.WriteString(`caf\u00e9`)
		case 2:
			b.WriteString("naïve")
		default:
			fmt.Fprintf(&b, "w%d", g.next(100))
		}
	}
	return b.String()
}

func (g *lcg) genTurn(role, value string) string {
	if g.next(2) == 0 {
		return fmt.Sprintf(`{"from": "%s", "value": "%s"}`, role, value)
	}
	return fmt.Sprintf(`{"value": "%s", "from": "%s", "n": %d}`, value, role, g.next(1000))
}

func (g *lcg) genTurns(n int) string {
	turns := make([]string, n)
	for t := range turns {
		if t%2 == 0 {
			turns[t] = g.genTurn("human", g.genWords(1+g.next(12)))
		} else {
			turns[t] = g.genTurn("gpt", g.genWords(g.next(15)))
		}
	}
	return "[" + strings.Join(turns, ", ") + "]"
}

func (g *lcg) genEntry(k int) string {
	head := fmt.Sprintf(`{"id": "k%d", `, k)
	switch g.next(12) {
	case 0:
		return head + `"conversations": ` + g.genTurns(1) + "}"
	case 1:
		return head + `"conversation": ` + g.genTurns(2+g.next(2)) + "}"
	case 2:
		return head + `"conversations": []}`
	case 3:
		rest := g.genTurn("gpt", g.genWords(g.next(15)))
		return head + `"conversations": [{"from": "human", "value": ""}, ` + rest + "]}"
	case 4:
		p := g.genWords(1+g.next(12)) + " Assistant:"
		c := g.genWords(g.next(15))
		return head + `"conversations": [` + g.genTurn("human", p) + ", " + g.genTurn("gpt", c) + "]}"
	case 5:
		one := g.genTurns(1)
		return head + `"conversations": ` + one + `, "conversation": ` + g.genTurns(2) + "}"
	case 6:
		one := g.genTurns(1)
		return head + `"conversations": ` + one + `, "x": 1.5e3, "conversations": ` + g.genTurns(2) + "}"
	case 7:
		return head + `"items": [1, true, null, -0.25]}`
	}
	return head + `"model": null, "conversations": ` + g.genTurns(2+g.next(3)) + "}"
}

// makeShareGPT is a ShareGPT-like file of n entries, byte for byte the one
// reference.py builds.
func makeShareGPT(n int) []byte {
	g := &lcg{state: 12345}
	entries := make([]string, n)
	for k := range entries {
		entries[k] = g.genEntry(k)
	}
	return []byte("[\n" + strings.Join(entries, ",\n") + "\n]\n")
}
