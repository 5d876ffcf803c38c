package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"benchserve/hub"
	"benchserve/internal/py/argparse"
	"benchserve/internal/py/pyjson"
	"benchserve/tokenizer"
)

// MooncakeBaseURL is where the Mooncake traces are published.
const MooncakeBaseURL = "https://raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release"

// mooncakeFiles are the traces' paths under MooncakeBaseURL by workload.
var mooncakeFiles = map[string]string{
	"mooncake":     "arxiv-trace/mooncake_trace.jsonl",
	"conversation": "traces/conversation_trace.jsonl",
	"synthetic":    "traces/synthetic_trace.jsonl",
	"toolagent":    "traces/toolagent_trace.jsonl",
}

// mooncakeDefaultOutput is the output length of a record without one.
const mooncakeDefaultOutput = 256

// traceRecord is one line of a Mooncake trace.
type traceRecord struct {
	timestamp float64 // ms
	outputLen int
	hashIDs   []int64
}

// loadMooncake replays a Mooncake trace (get_mooncake_request_over_time):
// each of the first --num-prompts records is a session of
// --mooncake-num-rounds rounds, all sent at the record's timestamp (bench
// sorts the rows by it and stretches the times by
// --mooncake-slowdown-factor). Round i adds the user message
// "Round {i+1}: {base}" to the history, and the history with an assistant
// placeholder for each earlier round is the prompt: the chat template's
// text for the completion and native backends, the messages themselves for
// the chat backends.
func loadMooncake(ctx context.Context, p Params, env Env) ([]Row, error) {
	if _, ok := mooncakeFiles[p.MooncakeWorkload]; !ok {
		return nil, fmt.Errorf("--mooncake-workload %s: choose from mooncake, conversation, synthetic, toolagent", p.MooncakeWorkload)
	}
	if p.MooncakeNumRounds < 1 {
		return nil, fmt.Errorf("--mooncake-num-rounds %d: must be at least 1", p.MooncakeNumRounds)
	}
	path, label, err := mooncakePath(ctx, p, env)
	if err != nil {
		return nil, err
	}
	recs, err := readTrace(env.meter.stage("Reading the trace", 0), path, label, p.NumPrompts)
	if err != nil {
		return nil, err
	}
	rounds := p.MooncakeNumRounds
	if err := fitMemory(env, mooncakeBytes(recs, rounds),
		fmt.Sprintf("--mooncake-num-rounds %d with %d sessions (--num-prompts %d)", rounds, len(recs), p.NumPrompts),
		"--mooncake-num-rounds or --num-prompts"); err != nil {
		return nil, err
	}
	chat := p.Backend.Chat
	templater, _ := env.Tok.(tokenizer.ChatTemplater)
	// Each session's messages are made once: round k's history is the
	// first 2k+1 of them, so the rounds are built in parallel.
	histories := make([][]tokenizer.Message, len(recs))
	for i, rec := range recs {
		base := mooncakeQuery(rec.hashIDs)
		placeholder := strings.TrimSuffix(strings.Repeat("story ", rec.outputLen), " ")
		h := make([]tokenizer.Message, 0, 2*rounds-1)
		for k := range rounds {
			if k > 0 {
				h = append(h, tokenizer.Message{Role: "assistant", Content: placeholder})
			}
			h = append(h, tokenizer.Message{Role: "user", Content: "Round " + strconv.Itoa(k+1) + ": " + base})
		}
		histories[i] = h
	}
	rows := make([]Row, len(recs)*rounds)
	special := env.Tok.NumSpecialTokensToAdd()
	var (
		tmplErr  error
		tmplOnce sync.Once
	)
	err = env.meter.stage("Building mooncake rounds", len(rows)).each(len(rows), func(j int) {
		rec, k := recs[j/rounds], j%rounds
		history := histories[j/rounds][:2*k+1]
		text, err := "", error(nil)
		if templater != nil {
			text, err = templater.ApplyChatTemplate(history, tokenizer.ChatOptions{AddGenerationPrompt: true})
		}
		if templater == nil || err != nil {
			if err != nil {
				tmplOnce.Do(func() { tmplErr = err })
			}
			text = roleLines(history)
		}
		r := &rows[j]
		r.PromptLen = env.Tok.Count(text) + special
		r.TextPromptLen = r.PromptLen
		r.OutputLen = rec.outputLen
		r.Timestamp, r.HasTimestamp = rec.timestamp, true
		if chat {
			r.Messages = messagesJSON(history)
		} else {
			r.Text = text
		}
	})
	if err != nil {
		return nil, err
	}
	if tmplErr != nil {
		fmt.Fprintf(env.Out, "Chat template failed (%v); prompts are \"role: content\" lines instead\n", tmplErr)
	}
	in, out := make([]int, len(rows)), make([]int, len(rows))
	for i, r := range rows {
		in[i], out[i] = r.PromptLen, r.OutputLen
	}
	span := 0.0
	if len(recs) > 0 {
		lo, hi := recs[0].timestamp, recs[0].timestamp
		for _, r := range recs {
			lo, hi = math.Min(lo, r.timestamp), math.Max(hi, r.timestamp)
		}
		span = (hi - lo) / 1000
	}
	fmt.Fprintf(env.Out, "#Sessions: %d, rounds per session: %d, trace span: %.3f s (from %s)\n", len(recs), rounds, span, label)
	printSums(env.Out, in, out)
	return rows, nil
}

// mooncakeBytes is about what a session's rounds take: round k's prompt
// holds the k user messages "Round k: {base}" and the k-1 placeholders
// before it, so a session of R rounds is quadratic in R. Template text
// and JSON syntax are left out, which keeps this an underestimate.
func mooncakeBytes(recs []traceRecord, rounds int) float64 {
	r := float64(rounds)
	total := 0.0
	for _, rec := range recs {
		base := float64(len("Round 1: ")) + float64(len("Tell me a story based on this context."))
		for _, id := range rec.hashIDs {
			base += float64(len(strconv.FormatInt(id, 10))) + 128*3 - 1
		}
		placeholder := max(0, 6*float64(rec.outputLen)-1)
		total += base*r*(r+1)/2 + placeholder*r*(r-1)/2 + rowBytes*r
	}
	return total
}

// mooncakeQuery is the session's base query: each hash id followed by 128
// "hi"s, all run together, then the request for a story.
func mooncakeQuery(ids []int64) string {
	hi := strings.TrimSuffix(strings.Repeat("hi ", 128), " ")
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteString(hi)
	}
	b.WriteString("Tell me a story based on this context.")
	return b.String()
}

// roleLines is the reference's prompt when the chat template fails.
func roleLines(ms []tokenizer.Message) string {
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Role)
		b.WriteString(": ")
		b.WriteString(m.Content)
	}
	return b.String()
}

// messagesJSON writes ms as json.dumps writes a list of role/content dicts.
func messagesJSON(ms []tokenizer.Message) []byte {
	b := []byte{'['}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"role": `...)
		b = pyjson.AppendString(b, m.Role)
		b = append(b, `, "content": `...)
		b = pyjson.AppendString(b, m.Content)
		b = append(b, '}')
	}
	return append(b, ']')
}

// mooncakePath is the trace to read: --dataset-path, else the workload's
// trace in the cache directory. As in the reference, a missing file is
// downloaded, to --dataset-path when it is given.
func mooncakePath(ctx context.Context, p Params, env Env) (path, label string, err error) {
	path, label = p.Path, "--dataset-path "+p.Path
	if path == "" {
		dir := env.CacheDir
		if dir == "" {
			return "", "", fmt.Errorf("--mooncake-workload %s: no cache directory to keep the trace in (neither XDG_CACHE_HOME nor HOME is set); pass --dataset-path with a local copy", p.MooncakeWorkload)
		}
		path = filepath.Join(dir, "mooncake", p.MooncakeWorkload+"_trace.jsonl")
		label = "trace " + path
	}
	if _, err := os.Stat(path); err == nil {
		return path, label, nil
	}
	base := env.TraceBaseURL
	if base == "" {
		base = MooncakeBaseURL
	}
	url := strings.TrimRight(base, "/") + "/" + mooncakeFiles[p.MooncakeWorkload]
	fmt.Fprintf(env.Out, "Downloading %s to %s\n", url, path)
	if err := download(ctx, env.HTTP, url, path); err != nil {
		return "", "", fmt.Errorf("--mooncake-workload %s: %s is missing and downloading %s failed: %v; pass --dataset-path with a local copy of the trace",
			p.MooncakeWorkload, path, url, err)
	}
	return path, label, nil
}

// download fetches url into path through a temporary file, so that an
// interrupted download leaves nothing behind. The error is the request's
// or the file's own, or "HTTP <status>".
func download(ctx context.Context, client *http.Client, url, path string) error {
	err := hub.Fetch(ctx, client, url, path, hub.FetchOptions{Size: -1})
	var fe *hub.FetchError
	switch {
	case !errors.As(err, &fe):
		return err
	case fe.Step == hub.FetchStatus:
		return fmt.Errorf("HTTP %s", fe.Status)
	}
	return fe.Err
}

// readTrace reads the first n records of a trace, as the reference's
// records[:n]; the lines after them are not read. st counts the records
// and stops the reading when the build is cancelled.
func readTrace(st *stage, path, label string, n int) ([]traceRecord, error) {
	f, err := openDatasetFile(path, label, "a JSONL trace")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []traceRecord
	r := bufio.NewReaderSize(f, 1<<16)
	for line := 1; len(recs) < n; line++ {
		data, rerr := r.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, fmt.Errorf("%s: line %d: %v", label, line, rerr)
		}
		if len(bytes.TrimSpace(data)) > 0 {
			rec, err := parseTraceLine(data)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: %v", label, line, err)
			}
			recs = append(recs, rec)
			if err := st.add(1); err != nil {
				return nil, err
			}
		}
		if rerr != nil {
			break
		}
	}
	return recs, nil
}

func parseTraceLine(data []byte) (traceRecord, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return traceRecord{}, fmt.Errorf("invalid JSON object: %v", err)
	}
	rec := traceRecord{outputLen: mooncakeDefaultOutput}
	ts, ok := m["timestamp"]
	if !ok {
		return rec, errors.New("field timestamp: missing")
	}
	if err := json.Unmarshal(ts, &rec.timestamp); err != nil || string(ts) == "null" {
		return rec, fmt.Errorf("field timestamp: want a number of milliseconds, got %s", ts)
	}
	if raw, ok := m["output_length"]; ok {
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil || string(raw) == "null" || v != math.Trunc(v) || v < 0 || v > 1<<31 {
			return rec, fmt.Errorf("field output_length: want a whole number of tokens, got %s", raw)
		}
		rec.outputLen = int(v)
	}
	if raw, ok := m["hash_ids"]; ok {
		if err := json.Unmarshal(raw, &rec.hashIDs); err != nil {
			return rec, fmt.Errorf("field hash_ids: want a list of integers, got %s", clip(raw))
		}
	}
	return rec, nil
}

// clip shortens raw JSON for an error message.
func clip(raw []byte) string {
	if len(raw) > 60 {
		return string(raw[:57]) + "..."
	}
	return string(raw)
}

func preflightMooncake(p Params) error {
	if _, ok := mooncakeFiles[p.MooncakeWorkload]; !ok {
		return fmt.Errorf("--mooncake-workload %s: choose from mooncake, conversation, synthetic, toolagent", p.MooncakeWorkload)
	}
	if p.MooncakeNumRounds < 1 {
		return fmt.Errorf("--mooncake-num-rounds %d: must be at least 1", p.MooncakeNumRounds)
	}
	return nil
}

var mooncakeFlags = []Flag{
	{Opt: argparse.Option{Name: "--mooncake-slowdown-factor", Type: argparse.Float, Default: 1.0,
		Help: "mooncake, mooncake-sessions, tracelab: stretch the trace's timing (sessions' arrivals) by this factor (--request-rate is ignored)."},
		Bind:    argparse.Val(func(p *Params) *float64 { return &p.MooncakeSlowdown }),
		Ignored: func(Spec) string { return "only mooncake, mooncake-sessions and tracelab replay a trace's times" }},
	{Opt: argparse.Option{Name: "--mooncake-num-rounds", Type: argparse.Int, Default: 1,
		Help: "mooncake: rounds per session; above 1 makes multi-turn sessions."},
		Bind: argparse.Val(func(p *Params) *int { return &p.MooncakeNumRounds }), Ignored: mooncakeOnly},
	{Opt: argparse.Option{Name: "--mooncake-workload", Type: argparse.Str, Choices: []string{"mooncake", "conversation", "synthetic", "toolagent"}, Default: "conversation",
		Help: "mooncake: which trace to replay."},
		Bind: argparse.Val(func(p *Params) *string { return &p.MooncakeWorkload }), Ignored: mooncakeOnly,
		Unused: func(p Params) string {
			if p.Path != "" {
				return "not used with --dataset-path, which names the trace to read"
			}
			return ""
		}},
}

func mooncakeOnly(Spec) string { return "only mooncake replays a trace" }
