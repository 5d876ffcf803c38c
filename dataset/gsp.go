package dataset

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	"benchserve/internal/py/argparse"
	"benchserve/internal/py/pyfmt"
	"benchserve/internal/py/pyjson"
	"benchserve/internal/py/pyrand"
)

// loadGSP is sample_generated_shared_prefix_requests: groups of prompts
// that share a random system prompt, each followed by its own random
// question. --num-prompts is ignored: there are groups × prompts per group
// rows.
func loadGSP(ctx context.Context, p Params, env Env) ([]Row, error) {
	if err := checkGSP(p); err != nil {
		return nil, err
	}
	dist, alpha := p.GSPGroupDistribution, 0.0
	if dist == "" {
		dist = "uniform"
	}
	if dist == "zipf" {
		alpha = *p.GSPZipfAlpha
	}
	cache := gspCachePath(p, env)
	useCache := p.GSPRangeRatio == 1 && !p.GSPSendRoutingKey && p.GSPNumTurns == 1
	if useCache && cache != "" {
		rows, err := readGSPCache(cache)
		if err == nil {
			fmt.Fprintf(env.Out, "\nLoading cached generated input data from %s\n", cache)
			return rows, nil
		}
		if !gspNotExist(err) {
			fmt.Fprintf(env.Out, "Warning: ignoring the GSP cache %s: %v\n", cache, err)
		}
	}
	if !useCache {
		fmt.Fprintf(env.Out, "\nCache bypassed (range_ratio=%s, send_routing_key=%s, num_turns=%d)\n",
			pyfmt.Float(p.GSPRangeRatio), pyBool(p.GSPSendRoutingKey), p.GSPNumTurns)
	}
	alphaRepr := "None"
	if p.GSPZipfAlpha != nil {
		alphaRepr = pyfmt.Float(*p.GSPZipfAlpha)
	}
	groups, ppg, turns := p.GSPNumGroups, p.GSPPromptsPerGroup, p.GSPNumTurns
	// The reference's f-string forgets the "prompts_per_group=" label.
	fmt.Fprintf(env.Out, "\nGenerating new input data... (num_groups=%d, prompts_per_group=%d, system_prompt_len=%d, question_len=%d, output_len=%d, range_ratio=%s, num_turns=%d, group_distribution=%s, zipf_alpha=%s)\n",
		groups, ppg, p.GSPSystemPromptLen, p.GSPQuestionLen, p.GSPOutputLen, pyfmt.Float(p.GSPRangeRatio), turns, pyfmt.Quote(dist), alphaRepr)

	runKey := ""
	if p.GSPSendRoutingKey {
		var b [4]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
		runKey = hex.EncodeToString(b[:]) + "_" + time.Now().Format("20060102150405") + "_"
	}

	// Lengths from NumPy's global generator, then token ids from Python's,
	// in the reference's order; decoding does not draw, so it runs in
	// parallel afterwards.
	if err := fitMemory(env, gspBytes(p), fmt.Sprintf("--gsp-num-groups %d --gsp-prompts-per-group %d", groups, ppg),
		"--gsp-num-groups, --gsp-prompts-per-group or the prompt lengths"); err != nil {
		return nil, err
	}
	lens := env.meter.stage("Drawing lengths", groups+2*groups*ppg*turns)
	sysLens, err := drawLens(env.NP, p.GSPSystemPromptLen, p.GSPRangeRatio, groups, groups, "--gsp-system-prompt-len", lens)
	if err != nil {
		return nil, err
	}
	qLens, err := drawLens(env.NP, p.GSPQuestionLen, p.GSPRangeRatio, groups*ppg*turns, groups*ppg*turns, "--gsp-question-len", lens)
	if err != nil {
		return nil, err
	}
	outLens, err := drawLens(env.NP, p.GSPOutputLen, p.GSPRangeRatio, groups*ppg, groups*ppg, "--gsp-output-len", lens)
	if err != nil {
		return nil, err
	}
	pool := vocabPool(env.Tok)
	if len(pool) == 0 && (p.GSPSystemPromptLen > 0 || p.GSPQuestionLen > 0) {
		return nil, fmt.Errorf("--dataset-name generated-shared-prefix: tokenizer %s has no ordinary tokens to draw prompts from", env.Tok.Name())
	}
	draws := env.meter.stage("Drawing prompt tokens", sumInts(sysLens)+sumInts(qLens))
	sysIDs, err := drawPrompts(env.Py, pool, sysLens, draws)
	if err != nil {
		return nil, err
	}
	qIDs, err := drawPrompts(env.Py, pool, qLens, draws)
	if err != nil {
		return nil, err
	}
	sys := make([]string, groups)
	questions := make([]string, len(qIDs))
	err = env.meter.stage("Decoding prompts", groups+len(qIDs)).each(groups+len(qIDs), func(i int) {
		if i < groups {
			sys[i], sysIDs[i] = env.Tok.Decode(sysIDs[i]), nil
		} else {
			questions[i-groups], qIDs[i-groups] = env.Tok.Decode(qIDs[i-groups]), nil
		}
	})
	if err != nil {
		return nil, err
	}

	assign, err := gspAssign(p, dist, alpha)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(assign))
	special := env.Tok.NumSpecialTokensToAdd()
	err = env.meter.stage("Building prompts", len(rows)).each(len(rows), func(slot int) {
		g := assign[slot]
		q := questions[slot*turns : (slot+1)*turns] // slot is src_g*ppg + src_p
		first := sys[g] + "\n\n" + q[0]
		r := &rows[slot]
		r.OutputLen = outLens[slot]
		if p.GSPFastPrepare {
			r.PromptLen = 1
		} else {
			r.PromptLen = env.Tok.Count(first) + special
		}
		r.TextPromptLen = r.PromptLen
		if runKey != "" {
			r.RoutingKey = runKey + strconv.Itoa(g)
		}
		if turns == 1 {
			r.Text = first
			return
		}
		r.Turns = make([][]byte, turns)
		r.Turns[0] = userMessage(first)
		for t := 1; t < turns; t++ {
			r.Turns[t] = userMessage(q[t])
		}
	})
	if err != nil {
		return nil, err
	}
	group := assign // each row's group, kept in step for the cache
	if !p.GSPOrdered {
		group = append([]int(nil), assign...)
		env.Py.Shuffle(len(rows), func(i, j int) {
			rows[i], rows[j] = rows[j], rows[i]
			group[i], group[j] = group[j], group[i]
		})
	}

	w := env.Out
	fmt.Fprintf(w, "\nGenerated shared prefix dataset statistics:\n")
	fmt.Fprintf(w, "Number of groups: %d\n", groups)
	fmt.Fprintf(w, "Prompts per group: %d\n", ppg)
	fmt.Fprintf(w, "Number of turns: %d\n", turns)
	fmt.Fprintf(w, "Group distribution: %s\n", dist)
	if dist == "zipf" {
		fmt.Fprintf(w, "Zipf alpha: %s\n", pyfmt.Float(alpha))
	}
	fmt.Fprintf(w, "Total prompts: %d\n", len(rows))
	if !p.GSPFastPrepare {
		in, out := 0, 0
		for i := range rows {
			in += rows[i].PromptLen
			out += rows[i].OutputLen
		}
		fmt.Fprintf(w, "Total input tokens: %d\n", in)
		fmt.Fprintf(w, "Total output tokens: %d\n", out)
		sysMean, err := meanTokens(env, "Counting system prompt tokens", sys)
		if err != nil {
			return nil, err
		}
		qMean, err := meanTokens(env, "Counting question tokens", questions)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "Average system prompt length: %.1f tokens\n", sysMean)
		fmt.Fprintf(w, "Average question length: %.1f tokens\n\n", qMean)
	}
	if useCache && cache != "" {
		fmt.Fprintf(w, "Caching generated input data to %s\n", cache)
		if err := writeGSPCache(cache, sys, rows, group); err != nil {
			fmt.Fprintf(w, "Warning: could not write the GSP cache: %v\n", err)
		}
	}
	return rows, nil
}

// checkGSP validates what the reference checks in argparse and in the
// dataset, and what would make it divide by zero.
func checkGSP(p Params) error {
	switch {
	case p.GSPNumGroups <= 0:
		return fmt.Errorf("--gsp-num-groups: must be > 0, got %d", p.GSPNumGroups)
	case p.GSPPromptsPerGroup <= 0:
		return fmt.Errorf("--gsp-prompts-per-group: must be > 0, got %d", p.GSPPromptsPerGroup)
	case p.GSPNumTurns <= 0:
		return fmt.Errorf("--gsp-num-turns: must be >= 1, got %d", p.GSPNumTurns)
	case p.GSPNumTurns > 1 && p.Backend.noChat():
		return fmt.Errorf("--gsp-num-turns %d: multi-turn conversations need a chat backend (%s), not --backend %s", p.GSPNumTurns, p.Backend.chats(), p.Backend.Name)
	}
	r := p.GSPRangeRatio
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Errorf("--gsp-range-ratio %v: not a finite number", r)
	}
	for _, l := range []struct {
		flag string
		full int
	}{{"--gsp-system-prompt-len", p.GSPSystemPromptLen}, {"--gsp-question-len", p.GSPQuestionLen}, {"--gsp-output-len", p.GSPOutputLen}} {
		if l.full > 0 && math.Trunc(float64(l.full)*r) > float64(l.full) {
			return fmt.Errorf("--gsp-range-ratio %s: the shortest length %.0f exceeds %s %d",
				strconv.FormatFloat(r, 'g', -1, 64), math.Trunc(float64(l.full)*r), l.flag, l.full)
		}
	}
	switch p.GSPGroupDistribution {
	case "", "uniform":
		if p.GSPZipfAlpha != nil {
			return errors.New(gspAlphaUnused)
		}
	case "zipf":
		if p.GSPZipfAlpha == nil {
			return errors.New(gspAlphaMissing)
		}
		if a := *p.GSPZipfAlpha; math.IsNaN(a) || math.IsInf(a, 0) || a <= 0 {
			return fmt.Errorf("--gsp-zipf-alpha must be a finite float > 0, got %s", pyfmt.Float(a))
		}
	default:
		return fmt.Errorf("--gsp-group-distribution must be 'uniform' or 'zipf', got %s", pyfmt.Quote(p.GSPGroupDistribution))
	}
	return nil
}

// gspAssign gives each slot its group: uniform is [0]*ppg + [1]*ppg + ...;
// zipf draws from numpy.random.default_rng(seed), apart from the global
// generators, with p[i] ∝ 1/(i+1)^alpha, so group 0 is the hottest.
func gspAssign(p Params, dist string, alpha float64) ([]int, error) {
	total := p.GSPNumGroups * p.GSPPromptsPerGroup
	if dist == "uniform" {
		out := make([]int, total)
		for i := range out {
			out[i] = i / p.GSPPromptsPerGroup
		}
		return out, nil
	}
	if p.Seed < 0 {
		return nil, fmt.Errorf("--seed %d: the zipf group distribution needs a seed >= 0", p.Seed)
	}
	out, err := pyrand.NewGenerator(uint64(p.Seed)).ChoiceP(zipfProbs(p.GSPNumGroups, alpha), total)
	if err != nil {
		return nil, fmt.Errorf("--gsp-zipf-alpha %s: %v", pyfmt.Float(alpha), err)
	}
	return out, nil
}

// zipfProbs is _zipf_group_probs: 1/rank**alpha over ranks 1..n, divided
// by its (pairwise, as NumPy's) sum. math.Pow may differ from the C
// library's pow in the last bit, as NumPy's own SIMD pow does between
// machines; a draw would have to land within that of a boundary to differ.
func zipfProbs(n int, alpha float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / math.Pow(float64(i+1), alpha)
	}
	s := pyrand.PairwiseSum(w)
	for i := range w {
		w[i] /= s
	}
	return w
}

// drawPrompts is gen_prompt's random.choices for each length in turn; the
// ids are decoded later. st counts the draws and stops them when the
// build is cancelled.
func drawPrompts(py *pyrand.Python, pool []int, lens []int, st *stage) ([][]int, error) {
	out := make([][]int, len(lens))
	n := float64(len(pool))
	for i, k := range lens {
		ids := make([]int, k)
		for j := range ids {
			ids[j] = pool[int(math.Floor(py.Random()*n))]
		}
		out[i] = ids
		if err := st.add(k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// meanTokens is the mean of len(encode(s)) over texts; what names the
// count in progress lines.
func meanTokens(env Env, what string, texts []string) (float64, error) {
	counts := make([]int, len(texts))
	if err := env.meter.stage(what, len(texts)).each(len(texts), func(i int) { counts[i] = env.Tok.Count(texts[i]) }); err != nil {
		return 0, err
	}
	sum := 0
	for _, c := range counts {
		sum += c + env.Tok.NumSpecialTokensToAdd()
	}
	return float64(sum) / float64(len(texts)), nil
}

// gspBytes is about what the rows take: each holds its own copy of its
// group's system prompt and its questions, as text, and the token ids
// drawn for the prompts are held until decoded.
func gspBytes(p Params) float64 {
	lo := func(full int) int64 { l, _ := lensLow(full, p.GSPRangeRatio, ""); return l }
	sys, q := meanLen(p.GSPSystemPromptLen, lo(p.GSPSystemPromptLen)), meanLen(p.GSPQuestionLen, lo(p.GSPQuestionLen))
	rows := float64(p.GSPNumGroups) * float64(p.GSPPromptsPerGroup)
	turns := float64(p.GSPNumTurns)
	return rows * (rowBytes + (sys+q*turns)*textBytesPerToken + q*turns*8)
}

func sumInts(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// userMessage is [{"role": "user", "content": text}] as json.dumps writes it.
func userMessage(text string) []byte {
	b := make([]byte, 0, len(text)+40)
	b = append(b, `[{"role": "user", "content": `...)
	b = pyjson.AppendString(b, text)
	return append(b, "}]"...)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// gspCacheName is the reference's cache file name, with the tokenizer's
// name (made safe for a file name) for its class name, and two suffixes
// the reference lacks so that a cache is never reused for a run it does not
// fit: "_fast" for --gsp-fast-prepare and "_ordered" for --gsp-ordered.
func gspCacheName(p Params, tokName string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gen_shared_prefix_%d_%d_%d_%d_%d_%d", p.Seed, p.GSPNumGroups, p.GSPPromptsPerGroup,
		p.GSPSystemPromptLen, p.GSPQuestionLen, p.GSPOutputLen)
	if p.GSPGroupDistribution == "zipf" {
		fmt.Fprintf(&b, "_zipf_%s", pyfmt.Float(*p.GSPZipfAlpha))
	}
	if p.GSPFastPrepare {
		b.WriteString("_fast")
	}
	if p.GSPOrdered {
		b.WriteString("_ordered")
	}
	b.WriteByte('_')
	b.WriteString(safeName(tokName))
	b.WriteString(".gsp")
	return b.String()
}

// safeName keeps letters, digits, '.', '-' and '_' and replaces the rest,
// adding a hash of the original when anything was replaced, so that
// "a/b" and "a_b" stay apart.
func safeName(s string) string {
	out := []byte(s)
	changed := false
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			out[i] = '_'
			changed = true
		}
	}
	if len(out) > 100 {
		out, changed = out[len(out)-100:], true
	}
	if !changed {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(s))
	return string(out) + "-" + strconv.FormatUint(uint64(h.Sum32()), 16)
}

// The pairing of --gsp-group-distribution and --gsp-zipf-alpha, which the
// reference checks as it parses them.
const (
	gspAlphaMissing = "--gsp-group-distribution=zipf requires --gsp-zipf-alpha (a finite float > 0)"
	gspAlphaUnused  = "--gsp-zipf-alpha is only meaningful with --gsp-group-distribution=zipf; remove --gsp-zipf-alpha or set --gsp-group-distribution=zipf"
)

// gspParsed is the reference's _validate_parsed_gsp_args.
func gspParsed(p Params) error {
	switch {
	case p.GSPGroupDistribution == "zipf" && p.GSPZipfAlpha == nil:
		return errors.New(gspAlphaMissing)
	case p.GSPGroupDistribution == "uniform" && p.GSPZipfAlpha != nil:
		return errors.New(gspAlphaUnused)
	}
	return nil
}

var gspFlags = []Flag{
	{Opt: argparse.Option{Name: "--gsp-num-groups", Type: argparse.Int, Default: 64,
		Help: "generated-shared-prefix: number of shared system prompts."},
		Bind: argparse.Val(func(p *Params) *int { return &p.GSPNumGroups }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-prompts-per-group", Type: argparse.Int, Default: 16,
		Help: "generated-shared-prefix: questions per system prompt."},
		Bind: argparse.Val(func(p *Params) *int { return &p.GSPPromptsPerGroup }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-system-prompt-len", Type: argparse.Int, Default: 2048,
		Help: "generated-shared-prefix: system prompt tokens."},
		Bind: argparse.Val(func(p *Params) *int { return &p.GSPSystemPromptLen }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-question-len", Type: argparse.Int, Default: 128,
		Help: "generated-shared-prefix: question tokens."},
		Bind: argparse.Val(func(p *Params) *int { return &p.GSPQuestionLen }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-output-len", Type: argparse.Int, Default: 256,
		Help: "generated-shared-prefix: output tokens."},
		Bind: argparse.Val(func(p *Params) *int { return &p.GSPOutputLen }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-range-ratio", Type: argparse.Float, Default: 1.0,
		Help: "generated-shared-prefix: lengths are drawn from [len*ratio, len]."},
		Bind: argparse.Val(func(p *Params) *float64 { return &p.GSPRangeRatio }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-fast-prepare", Action: argparse.StoreTrue,
		Help: "generated-shared-prefix: skip token counting (faster; input statistics become inexact)."},
		Bind: argparse.Val(func(p *Params) *bool { return &p.GSPFastPrepare }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-send-routing-key", Action: argparse.StoreTrue,
		Help: "generated-shared-prefix: send an X-SMG-Routing-Key header, one key per group."},
		Bind: argparse.Val(func(p *Params) *bool { return &p.GSPSendRoutingKey }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-num-turns", Type: argparse.Int, Default: 1,
		Help: "generated-shared-prefix: questions per conversation; above 1 needs a chat backend."},
		Bind: argparse.Val(func(p *Params) *int { return &p.GSPNumTurns }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-ordered", Action: argparse.StoreTrue,
		Help: "generated-shared-prefix: keep the requests in group order instead of shuffling."},
		Bind: argparse.Val(func(p *Params) *bool { return &p.GSPOrdered }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-group-distribution", Type: argparse.Str, Choices: []string{"uniform", "zipf"}, Default: "uniform",
		Help: "generated-shared-prefix: give every group the same number of requests, or draw each request's group by Zipf rank (needs --gsp-zipf-alpha)."},
		Bind: argparse.Val(func(p *Params) *string { return &p.GSPGroupDistribution }), Ignored: gspOnly},
	{Opt: argparse.Option{Name: "--gsp-zipf-alpha", Type: argparse.FinitePositive,
		Help: "generated-shared-prefix: Zipf exponent, a finite float > 0; only with --gsp-group-distribution zipf."},
		Bind: argparse.Ptr(func(p *Params) **float64 { return &p.GSPZipfAlpha }), Ignored: gspOnly},
}

func gspOnly(Spec) string { return "only generated-shared-prefix reads the --gsp-* flags" }

// gspNotes are the notes on the shared flags it does not read.
var gspNotes = map[string]func(p Params) string{
	"--num-prompts": func(p Params) string {
		return fmt.Sprintf("not used by --dataset-name %s, which sends --gsp-num-groups × --gsp-prompts-per-group = %d requests",
			p.Name, p.GSPNumGroups*p.GSPPromptsPerGroup)
	},
	"--random-range-ratio": func(p Params) string {
		return "--dataset-name " + p.Name + " ignores it (its lengths use --gsp-range-ratio)"
	},
}
