package dataset

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"benchserve/tokenizer"
)

// Synthetic sessions (--session-turns, --per-turn-input-len): each row of
// random or random-ids becomes a conversation, as vllm-bench's
// --multi-turn and SGLang's HiCache bench make them. Turn 0 is the row's
// prompt; each later turn adds a user message of --per-turn-input-len
// tokens (default --random-input-len, drawn with --random-range-ratio),
// and the server's replies join the history, which therefore grows by the
// reply and the new message each turn. The number of turns and the later
// turns' lengths are drawn per row from --seed and the row alone, so
// shards and reruns build the same sessions; the reference's own draws
// (turn 0's and the output lengths) are left as they are.
type sessions struct {
	lo, hi int // turns per session, drawn uniformly from [lo, hi]
	full   int // the later turns' length
	low    int64
	seed   uint64
	// turns and added are each row's turn count and later turns' tokens,
	// filled by build.
	turns, added []int
}

// sessionSeed keeps these draws apart from --think-time's, which use
// --seed and the plan position too.
const sessionSeed = 0x5e5510_75e55105

// parseSessionTurns reads --session-turns: N or A-B, all >= 1.
func parseSessionTurns(s string) (lo, hi int, err error) {
	bad := fmt.Errorf("--session-turns %q: expected N or A-B, whole numbers >= 1 with A <= B", s)
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	if lo, err = strconv.Atoi(strings.TrimSpace(a)); err != nil || lo < 1 {
		return 0, 0, bad
	}
	hi = lo
	if isRange {
		if hi, err = strconv.Atoi(strings.TrimSpace(b)); err != nil || hi < lo {
			return 0, 0, bad
		}
	}
	return lo, hi, nil
}

// newSessions checks the session flags; nil, nil without --session-turns.
func newSessions(p Params) (*sessions, error) {
	if p.SessionTurns == nil {
		return nil, nil // a --per-turn-input-len alone has a note
	}
	lo, hi, err := parseSessionTurns(*p.SessionTurns)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Backend.noChat():
		return nil, fmt.Errorf("--session-turns: sessions are chat conversations and need a chat backend (%s), not --backend %s", p.Backend.chats(), p.Backend.Name)
	case p.TokenizePrompt:
		return nil, errors.New("--session-turns: sessions send chat messages, not token ids; drop --tokenize-prompt")
	}
	s := &sessions{lo: lo, hi: hi, full: p.RandomInputLen, seed: uint64(p.Seed)}
	flag := "--random-input-len"
	if p.PerTurnInputLen != nil {
		if *p.PerTurnInputLen < 1 {
			return nil, fmt.Errorf("--per-turn-input-len: must be >= 1, got %d", *p.PerTurnInputLen)
		}
		s.full, flag = *p.PerTurnInputLen, "--per-turn-input-len"
	}
	if hi > 1 && s.full < 1 {
		return nil, fmt.Errorf("%s %d: the later turns of --session-turns need at least 1 token", flag, s.full)
	}
	if s.low, err = lensLow(s.full, p.RandomRangeRatio, flag); err != nil {
		return nil, err
	}
	return s, nil
}

// preflightRandom is the random datasets' checks of their lengths and of
// the session flags.
func preflightRandom(p Params) error {
	if err := preflightLens(p); err != nil {
		return err
	}
	if err := preflightRerank(p); err != nil {
		return err
	}
	_, err := newSessions(p)
	return err
}

// meanBytes is what the later turns add to a row, for the memory check.
func (s *sessions) meanBytes() float64 {
	if s == nil {
		return 0
	}
	turns := float64(s.lo+s.hi)/2 - 1
	return turns * (meanLen(s.full, s.low)*textBytesPerToken + 64)
}

// build makes row i a session: its prompt becomes turn 0's message, and
// each later turn a message of the row's token unit, continued where the
// turn before stopped, decoded. Rows are built concurrently; each writes
// only its own turn count.
func (s *sessions) build(r *Row, i int, unit []int, tok tokenizer.Tokenizer) {
	rng := rand.New(rand.NewPCG(s.seed^sessionSeed, uint64(i)))
	n := s.lo + rng.IntN(s.hi-s.lo+1)
	s.turns[i] = n
	r.Turns = make([][]byte, n)
	r.Turns[0] = userMessage(r.Text)
	r.Text = ""
	if len(unit) == 0 {
		unit = []int{i % max(1, tok.VocabSize())}
	}
	pos := r.PromptLen % len(unit)
	for k := 1; k < n; k++ {
		l := int(s.low) + rng.IntN(s.full-int(s.low)+1)
		ids := append(append(make([]int, 0, len(unit)), unit[pos:]...), unit[:pos]...)
		r.Turns[k] = userMessage(repeatDecode(tok, ids, l))
		pos = (pos + l) % len(unit)
		s.added[i] += l
	}
}

// sizes allots the turn counts of n rows before they are built.
func (s *sessions) sizes(n int) {
	if s != nil {
		s.turns, s.added = make([]int, n), make([]int, n)
	}
}

// print gives the sessions' shape after the reference's lines.
func (s *sessions) print(w io.Writer, rows int) {
	if s == nil || rows == 0 {
		return
	}
	lo, hi, sum, added := s.turns[0], s.turns[0], 0, 0
	for i, n := range s.turns[:rows] {
		lo, hi, sum, added = min(lo, n), max(hi, n), sum+n, added+s.added[i]
	}
	fmt.Fprintf(w, "#Sessions: %d (turns/session min=%d max=%d avg=%.1f)\n", rows, lo, hi, float64(sum)/float64(rows))
	fmt.Fprintf(w, "#Later-turn input tokens: %d\n", added)
}
