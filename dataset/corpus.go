package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"

	"benchserve/internal/jsonscan"
)

// corpus is a ShareGPT file reduced to where the first two turns of each
// conversation are: one pass over the file validates it and records byte
// spans, and only the turns a dataset walks are read back and decoded.
// The real file is ~670 MB; its spans take a few MB.
type corpus struct {
	r     io.ReaderAt
	label string // how errors name the file
	pairs []pair

	// What the file holds besides, to say why it gave no pairs.
	entries  int      // objects in the top-level list
	convs    int      // of them, with a "conversations" (or "conversation") list
	keys     []string // the keys of the first entry without one
	keysMore bool     // it has keys not in keys (long or not ASCII)
}

// pair locates conversation[0].value and conversation[1].value.
type pair struct{ prompt, completion span }

// span is a string token's content in the file, escapes undecoded.
type span struct {
	off int64
	n   int64
	esc bool
}

// scanBufSize is the read size of the indexing pass.
const scanBufSize = 1 << 20

// openCorpus indexes the ShareGPT file at path. label names the file in
// errors ("--dataset-path x.json"). The caller closes the corpus.
func openCorpus(ctx context.Context, path, label string) (*corpus, error) {
	f, err := openDatasetFile(path, label, "a JSON file")
	if err != nil {
		return nil, err
	}
	c, err := indexCorpus(ctx, f, label)
	if err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Close closes the file, if the corpus read one.
func (c *corpus) Close() error {
	if cl, ok := c.r.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// turnInfo is what the index keeps of one of the first two turns.
type turnInfo struct {
	kind  turnKind
	value span
}

type turnKind uint8

const (
	turnOK turnKind = iota
	turnNotObject
	turnNoValue
	turnValueNotString
)

// convInfo is one "conversations" (or "conversation") member of an entry.
type convInfo struct {
	present bool
	notList bool
	n       int // turns, counted up to 2
	turn    [2]turnInfo
}

// structError is a well-formed file whose shape the datasets cannot use;
// it is reported only if the whole file is valid JSON, as Python parses
// the file before looking at it.
type structError struct {
	off int64
	msg string
}

// indexCorpus makes the one pass over a ShareGPT file.
func indexCorpus(ctx context.Context, r io.ReaderAt, label string) (*corpus, error) {
	c := &corpus{r: r, label: label}
	return c, c.index(ctx)
}

func (c *corpus) index(ctx context.Context) error {
	s := newScanner(io.NewSectionReader(c.r, 0, math.MaxInt64), scanBufSize)
	s.poll = ctx.Err
	serr := c.scan(s)
	if s.err != nil {
		var se *syntaxError
		if errors.As(s.err, &se) {
			line, col := c.position(se.off)
			return fmt.Errorf("%s: invalid JSON at line %d column %d: %s", c.label, line, col, se.msg)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %v", c.label, unwrapPath(s.err))
	}
	if serr != nil {
		line, _ := c.position(serr.off)
		return fmt.Errorf("%s: %s (line %d)", c.label, serr.msg, line)
	}
	return nil
}

// scan reads the whole file, keeping pairs; it returns the first shape
// error, which counts only if s.err is nil.
func (c *corpus) scan(s *scanner) *structError {
	var serr *structError
	structFail := func(off int64, format string, a ...any) {
		if serr == nil {
			serr = &structError{off: off, msg: fmt.Sprintf(format, a...)}
		}
	}
	switch s.peek() {
	case '[':
		s.array(0, func(i int) bool {
			if s.peek() != '{' {
				off := s.offset()
				ok := s.skipValue(1)
				structFail(off, "entry %d: not an object", i)
				return ok
			}
			return c.entry(s, i, structFail)
		})
	default:
		off := s.offset()
		if s.skipValue(0) {
			structFail(off, "the top level is not a JSON list of conversations")
		}
	}
	s.finish()
	return serr
}

// entry reads one conversation object, keeping its first two turns when
// it has at least two, as Python's
// data.get("conversations", data.get("conversation", [])) then [0], [1].
func (c *corpus) entry(s *scanner, i int, structFail func(int64, string, ...any)) bool {
	start := s.offset()
	var convs, conv convInfo
	var keys []string
	keysMore := false
	ok := s.object(1, func(key stringInfo) bool {
		switch {
		case key.is("conversations"):
			return readConv(s, &convs)
		case key.is("conversation"):
			return readConv(s, &conv)
		}
		if c.keys == nil && len(keys) < 8 && key.keyOK {
			keys = append(keys, string(key.key[:key.keyN]))
		} else {
			keysMore = true
		}
		return s.skipValue(2)
	})
	if !ok {
		return false
	}
	c.entries++
	name, ci := "conversations", &convs
	if !convs.present {
		name, ci = "conversation", &conv
	}
	if ci.present && !ci.notList {
		c.convs++
	}
	switch {
	case !ci.present:
		if c.keys == nil {
			c.keys, c.keysMore = append([]string{}, keys...), keysMore
		}
	case ci.notList:
		structFail(start, "entry %d: %q is not a list", i, name)
	case ci.n >= 2:
		for t, ti := range ci.turn {
			switch ti.kind {
			case turnNotObject:
				structFail(start, "entry %d: %s[%d] is not an object", i, name, t)
				return true
			case turnNoValue:
				structFail(start, "entry %d: %s[%d] has no \"value\"", i, name, t)
				return true
			case turnValueNotString:
				structFail(start, "entry %d: %s[%d].value is not a string", i, name, t)
				return true
			}
		}
		c.pairs = append(c.pairs, pair{ci.turn[0].value, ci.turn[1].value})
	}
	return true
}

// readConv reads the value of a "conversations" member. A repeated key
// replaces the earlier one, as in Python's json.
func readConv(s *scanner, ci *convInfo) bool {
	*ci = convInfo{present: true}
	if s.peek() != '[' {
		ci.notList = true
		return s.skipValue(2)
	}
	return s.array(2, func(t int) bool {
		if t >= 2 {
			return s.skipValue(3)
		}
		ci.n = t + 1
		ti := &ci.turn[t]
		if s.peek() != '{' {
			ti.kind = turnNotObject
			return s.skipValue(3)
		}
		ti.kind = turnNoValue
		return s.object(3, func(key stringInfo) bool {
			if !key.is("value") {
				return s.skipValue(4)
			}
			if s.peek() != '"' {
				ti.kind = turnValueNotString
				return s.skipValue(4)
			}
			var si stringInfo
			if !s.scanString(&si) {
				return false
			}
			ti.kind, ti.value = turnOK, span{off: si.off, n: si.n, esc: si.esc}
			return true
		})
	})
}

// usable says why a corpus that gave no pairs is of no use to a dataset
// that wants n rows: nil when it has pairs or none are wanted.
func (c *corpus) usable(n int) error {
	if len(c.pairs) > 0 || n <= 0 {
		return nil
	}
	switch {
	case c.entries == 0:
		return fmt.Errorf("%s: the list of conversations is empty", c.label)
	case c.convs == 0:
		return fmt.Errorf("%s: no row has a \"conversations\" list (%s)", c.label, c.describeKeys())
	}
	return fmt.Errorf("%s: no conversation has two turns (a prompt and a reply)", c.label)
}

// describeKeys says what the rows without conversations hold, with a hint
// for the shapes other datasets read.
func (c *corpus) describeKeys() string {
	if len(c.keys) == 0 && !c.keysMore {
		return "the rows are empty objects"
	}
	q := make([]string, len(c.keys))
	for i, k := range c.keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	s := "the rows have " + strings.Join(q, ", ")
	if c.keysMore {
		if len(q) > 0 {
			s += " and more"
		} else {
			s += " other keys"
		}
	}
	if slices.Contains(c.keys, "messages") {
		s += ": an OpenAI-format file? --dataset-name openai reads those, one JSON object a line"
	}
	return s
}

// position turns a byte offset into a 1-based line and column, the column
// counted in characters as Python's json reports it.
func (c *corpus) position(off int64) (line, col int) {
	r := io.NewSectionReader(c.r, 0, off)
	buf := make([]byte, 64<<10)
	line, col = 1, 1
	for {
		k, err := r.Read(buf)
		chunk := buf[:k]
		if j := bytes.LastIndexByte(chunk, '\n'); j >= 0 {
			line += bytes.Count(chunk, []byte{'\n'})
			chunk, col = chunk[j+1:], 1
		}
		col += runeStarts(chunk)
		if err != nil {
			return line, col
		}
	}
}

// runeStarts counts the bytes that are not UTF-8 continuation bytes, which
// counts characters even when a chunk splits one.
func runeStarts(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0xc0 != 0x80 {
			n++
		}
	}
	return n
}

// text reads and decodes one string.
func (c *corpus) text(sp span) (string, error) {
	raw := make([]byte, sp.n)
	if _, err := c.r.ReadAt(raw, sp.off); err != nil {
		return "", fmt.Errorf("%s: reading back a conversation: %v", c.label, unwrapPath(err))
	}
	if !sp.esc {
		return string(raw), nil
	}
	// Validated by the index; a broken escape (the file changed since) is
	// kept as it is, not a panic.
	return string(jsonscan.AppendUnquoted(make([]byte, 0, len(raw)), raw)), nil
}
