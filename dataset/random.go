package dataset

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"benchserve/tokenizer"
)

// loadRandom is sample_random_requests: lengths drawn with numpy, then
// prompts of exactly those token counts, made from ShareGPT's token space
// (random) or from consecutive vocabulary ids (random-ids).
func loadRandom(ctx context.Context, p Params, env Env) ([]Row, error) {
	if p.RerankDocs > 0 {
		return loadRerank(ctx, p, env)
	}
	n := p.NumPrompts
	inLo, err := lensLow(p.RandomInputLen, p.RandomRangeRatio, "--random-input-len")
	if err != nil {
		return nil, err
	}
	if _, err := lensLow(p.RandomOutputLen, p.RandomRangeRatio, "--random-output-len"); err != nil {
		return nil, err
	}
	sess, err := newSessions(p)
	if err != nil {
		return nil, err
	}

	// random has no more rows than ShareGPT has prompts, whatever
	// --num-prompts asks, so it keeps only that many lengths.
	var c *corpus
	var label string
	rowsMax := n
	if p.Name == "random" {
		var path string
		if path, label, err = shareGPTPath(ctx, p, env); err != nil {
			return nil, err
		}
		if c, err = openCorpus(ctx, path, label); err != nil {
			return nil, err
		}
		defer c.Close()
		if err := c.usable(n); err != nil {
			return nil, err
		}
		rowsMax = min(n, len(c.pairs))
	}
	perToken := float64(textBytesPerToken)
	if p.TokenizePrompt {
		perToken = float64(reflect.TypeFor[int]().Size())
	}
	need := float64(rowsMax) * (rowBytes + 16 + meanLen(p.RandomInputLen, inLo)*perToken + sess.meanBytes())
	if err := fitMemory(env, need, "--num-prompts "+strconv.Itoa(n), "--num-prompts or --random-input-len"); err != nil {
		return nil, err
	}

	st := env.meter.stage("Drawing lengths", 2*n)
	inLens, err := drawLens(env.NP, p.RandomInputLen, p.RandomRangeRatio, n, rowsMax, "--random-input-len", st)
	if err != nil {
		return nil, err
	}
	outLens, err := drawLens(env.NP, p.RandomOutputLen, p.RandomRangeRatio, n, rowsMax, "--random-output-len", st)
	if err != nil {
		return nil, err
	}
	if !p.TokenizePrompt {
		// The server adds BOS and the like to a text prompt.
		special := env.Tok.NumSpecialTokensToAdd()
		for i := range inLens {
			inLens[i] = max(0, inLens[i]-special)
		}
	}

	var units [][]int // each row's ids repeat its unit to its length
	var unit func(i int) []int
	if p.Name == "random" {
		if units, err = shareGPTUnits(ctx, c, len(inLens), env); err != nil {
			return nil, err
		}
		unit = func(i int) []int { u := units[i]; units[i] = nil; return u }
	} else if unit, err = consecutiveIDs(inLens, env); err != nil {
		return nil, err
	}

	rows := make([]Row, len(inLens))
	if p.Name == "random" {
		rows = rows[:len(units)]
	}
	sess.sizes(len(rows))
	err = env.meter.stage("Building prompts", len(rows)).each(len(rows), func(i int) {
		r := &rows[i]
		r.PromptLen, r.TextPromptLen, r.OutputLen = inLens[i], inLens[i], outLens[i]
		u := unit(i)
		switch {
		case p.TokenizePrompt && len(u) == inLens[i]:
			r.IDs = u
		case p.TokenizePrompt:
			r.IDs = repeatIDs(u, inLens[i])
		default:
			r.Text = repeatDecode(env.Tok, u, inLens[i])
		}
		if sess != nil {
			sess.build(r, i, u, env.Tok)
		}
	})
	if err != nil {
		return nil, err
	}
	if p.Name == "random" {
		shortfall(env.Out, label, len(rows), n)
	}
	printSums(env.Out, inLens[:len(rows)], outLens[:len(rows)])
	sess.print(env.Out, len(rows))
	return rows, nil
}

// shareGPTUnits walks the shuffled ShareGPT prompts, tokenized with
// special tokens, and returns the ids of the first n that are not empty.
// The file may run out first.
func shareGPTUnits(ctx context.Context, c *corpus, n int, env Env) ([][]int, error) {
	env.Py.Shuffle(len(c.pairs), func(i, j int) { c.pairs[i], c.pairs[j] = c.pairs[j], c.pairs[i] })
	if n == 0 {
		return nil, nil
	}

	type encoded struct {
		ids []int
		err error
	}
	encode := func(i int) encoded {
		text, err := c.text(c.pairs[i].prompt)
		if err != nil {
			return encoded{err: err}
		}
		return encoded{ids: env.Tok.Encode(text, true)}
	}
	out := make([][]int, 0, n)
	var walkErr error
	st := env.meter.stage("Tokenizing ShareGPT prompts", n)
	err := ahead(ctx, len(c.pairs), workers, encode, func(_ int, e encoded) bool {
		if e.err != nil {
			walkErr = e.err
			return false
		}
		if len(e.ids) > 0 {
			out = append(out, e.ids)
			st.add(1)
		}
		return len(out) < n
	})
	if err == nil {
		err = walkErr
	}
	return out, err
}

// repeatIDs is (unit * ceil(n/len(unit)))[:n]; an empty unit gives none.
func repeatIDs(unit []int, n int) []int {
	if len(unit) == 0 {
		return []int{}
	}
	ids := make([]int, n)
	k := copy(ids, unit)
	for k < n {
		k += copy(ids[k:], ids[:k])
	}
	return ids
}

// repeatDecode is Decode(repeatIDs(unit, n)) without decoding every copy.
// A prompt of 8,192 tokens is a short ShareGPT prompt U repeated k times
// and then cut (P, a prefix of U). Its text is that of the first copy (A),
// then the same text D for each further copy, then a tail T, assuming what
// every tokenizer.json decoder and tiktoken do: a token's text depends on
// its neighbours and on whether it is the first, not on tokens further
// away. Decoding U+P and U+U+P gives A+T and A+D+T. When the second ends
// with the first, A+D is X+A for the X before it, and then A+D^(k-1) is
// X^(k-1)+A: the text is X^(k-1)+A+T. Otherwise decoding U as well gives A
// and D; when even those do not fit, the ids are decoded in full.
func repeatDecode(tok tokenizer.Tokenizer, unit []int, n int) string {
	l := len(unit)
	if n <= l {
		return tok.Decode(unit[:n])
	}
	if l == 0 || n <= 4*l {
		// Few copies: decoding them all costs no more than the check.
		return tok.Decode(repeatIDs(unit, n))
	}
	k, r := n/l, n%l
	buf := make([]int, 2*l+r) // U, U, P
	copy(buf, unit)
	copy(buf[l:], unit)
	copy(buf[2*l:], unit[:r])
	at := tok.Decode(buf[l:])
	adt := tok.Decode(buf)
	head, rest := "", at // the text is head, k-1 times, then rest
	if x, ok := strings.CutSuffix(adt, at); ok {
		head = x
	} else {
		a := tok.Decode(buf[:l])
		t, ok := strings.CutPrefix(at, a)
		dlen := len(adt) - len(at)
		if !ok || dlen < 0 || !strings.HasPrefix(adt, a) || adt[len(a)+dlen:] != t {
			return tok.Decode(repeatIDs(unit, n))
		}
		d := adt[len(a) : len(a)+dlen]
		var b strings.Builder
		b.Grow(len(a) + (k-1)*len(d) + len(t))
		b.WriteString(a)
		for range k - 1 {
			b.WriteString(d)
		}
		b.WriteString(t)
		return b.String()
	}
	var b strings.Builder
	b.Grow((k-1)*len(head) + len(rest))
	for range k - 1 {
		b.WriteString(head)
	}
	b.WriteString(rest)
	return b.String()
}

// consecutiveIDs gives prompt i the ids (offset_i + i + j) % vocab_size for
// j < target_i, the offsets drawn with np.random.randint(0, vocab_size, N).
// It returns a function that makes each prompt's ids in full, as a unit of
// one copy, when its row is built: holding them all at once would take
// 8 bytes a token.
func consecutiveIDs(targets []int, env Env) (func(i int) []int, error) {
	v := env.Tok.VocabSize()
	if v <= 0 {
		return nil, fmt.Errorf("--dataset-name random-ids: tokenizer %s has an empty vocabulary", env.Tok.Name())
	}
	offsets := env.NP.RandInts(0, int64(v), len(targets))
	return func(i int) []int {
		ids := make([]int, targets[i])
		id := int((offsets[i] + int64(i)) % int64(v))
		for j := range ids {
			ids[j] = id
			if id++; id == v {
				id = 0
			}
		}
		return ids
	}, nil
}

// randomTag is the reference's result file name part for the random
// datasets: the lengths.
func randomTag(p Params) string {
	return strconv.Itoa(p.RandomInputLen) + "_" + strconv.Itoa(p.RandomOutputLen)
}
