package dataset

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"benchserve/tokenizer"
)

// session is one conversation of a session trace (mooncake-sessions,
// tracelab) before it becomes a row.
type session struct {
	key   string
	line  int     // its first line
	at    float64 // arrival, ms (timed: the trace gave one)
	timed bool
	turns []sessionTurn
	// snapshots: each turn's messages are the whole request.
	snapshots bool
}

// sessionTurn is one turn: the messages it adds (or, for snapshots, sends),
// the trace's count of its new input tokens, and what the trace recorded.
type sessionTurn struct {
	msgs     []byte
	inputLen int
	info     TurnInfo
}

// sessionRows makes one multi-turn row per session, its arrival the row's
// timestamp when the trace gave one, and prints what was read.
func sessionRows(env Env, sessions []session, label string) []Row {
	rows := make([]Row, len(sessions))
	in, out, turns := []int{}, []int{}, make([]int, len(sessions))
	delays, waited := 0, 0.0
	for i, s := range sessions {
		r := Row{Turns: make([][]byte, len(s.turns)), TurnInfo: make([]TurnInfo, len(s.turns)), Snapshots: s.snapshots,
			Timestamp: s.at, HasTimestamp: s.timed}
		for k, t := range s.turns {
			r.Turns[k], r.TurnInfo[k] = t.msgs, t.info
			in, out = append(in, t.inputLen), append(out, t.info.OutputLen)
			if k > 0 && t.info.HasDelay {
				delays++
				waited += t.info.DelayMs
			}
		}
		r.PromptLen, r.TextPromptLen, r.OutputLen = s.turns[0].inputLen, s.turns[0].inputLen, s.turns[0].info.OutputLen
		rows[i], turns[i] = r, len(s.turns)
	}
	span := ""
	if sessions[0].timed {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range sessions {
			lo, hi = math.Min(lo, s.at), math.Max(hi, s.at)
		}
		span = fmt.Sprintf(", arrivals over %.3f s", (hi-lo)/1000)
	}
	fmt.Fprintf(env.Out, "#Sessions: %d (turns/session min=%d max=%d avg=%.1f%s, from %s)\n",
		len(rows), slices.Min(turns), slices.Max(turns), meanInts(turns), span, label)
	if delays > 0 {
		fmt.Fprintf(env.Out, "#Recorded delays: %d, mean %.1f ms\n", delays, waited/float64(delays))
	}
	printSums(env.Out, in, out)
	return rows
}

// blockText makes prompt text from token counts: a block of token ids
// drawn from a seeded generator per (namespace, id), decoded, so that the
// same block id gives the same text and sessions that share block ids
// share a prefix (as a trace's hash ids mean).
type blockText struct {
	tok  tokenizer.Tokenizer
	pool []int
	seed uint64
	size int // tokens per block
	memo map[[2]uint64]string
}

// Block namespaces: a trace's own block ids, and keys for text of its own.
const (
	nsHash uint64 = iota + 1
	nsFresh
	nsPrefix
)

func newBlockText(tok tokenizer.Tokenizer, seed, size int) *blockText {
	return &blockText{tok: tok, pool: vocabPool(tok), seed: uint64(seed), size: size, memo: map[[2]uint64]string{}}
}

// draw is the text of the first n tokens of stream (ns, id).
func (b *blockText) draw(ns, id uint64, n int) string {
	if n <= 0 || len(b.pool) == 0 {
		return ""
	}
	full := n == b.size
	if s, ok := b.memo[[2]uint64{ns, id}]; ok && full {
		return s
	}
	rng := rand.New(rand.NewPCG(b.seed^ns<<56, id))
	ids := make([]int, n)
	for i := range ids {
		ids[i] = b.pool[rng.IntN(len(b.pool))]
	}
	s := b.tok.Decode(ids)
	if full {
		b.memo[[2]uint64{ns, id}] = s
	}
	return s
}

// blocks is n tokens' text over the block ids (size tokens each, the last
// cut short), then fresh text of key for what the blocks do not cover.
// Blocks are joined by a space where neither side has one, so that a
// tokenizer whose decoding drops the first token's space (SentencePiece)
// does not merge words across blocks.
func (b *blockText) blocks(ns uint64, ids []uint64, n int, key uint64) string {
	out := ""
	for _, id := range ids {
		if n <= 0 {
			break
		}
		m := min(n, b.size)
		out = joinText(out, b.draw(ns, id, m))
		n -= m
	}
	return joinText(out, b.draw(nsFresh, key, n))
}

// joinText is a then b, with a space between where neither has one.
func joinText(a, b string) string {
	if a == "" || b == "" || strings.ContainsAny(a[len(a)-1:], " \t\n") || strings.ContainsAny(b[:1], " \t\n") {
		return a + b
	}
	return a + " " + b
}

// keyOf is a stable key for a string (a session and turn's own text).
func keyOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// openTrace opens a trace file, through gzip when its name ends in .gz.
func openTrace(path, label, want string) (io.ReadCloser, error) {
	f, err := openDatasetFile(path, label, want)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, nil
	}
	z, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a gzip file: %v", label, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{z, f}, nil
}

// traceLines calls fn with each line of r (1-based), without its newline.
func traceLines(ctx context.Context, r io.Reader, label string, fn func(n int, line string) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		data, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		if len(data) > 0 {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if ferr := fn(n, strings.TrimRight(string(data), "\r\n")); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return nil
		}
	}
}

// sessionsNeedChat refuses a backend that cannot hold a conversation.
func sessionsNeedChat(name string, b Backend) error {
	if b.noChat() {
		return fmt.Errorf("--backend %s: %s sessions need a chat backend (%s)", b.Name, name, b.chats())
	}
	return nil
}

// preflightSessions is the session traces' checks before any file is read.
func preflightSessions(p Params) error {
	if err := sessionsNeedChat(p.Name, p.Backend); err != nil {
		return err
	}
	if p.Path == "" {
		return fmt.Errorf("--dataset-path: %s needs the trace file", p.Name)
	}
	return nil
}
