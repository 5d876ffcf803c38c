package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// aRun runs the command against as with the settings every test here
// shares, failing the test on a non-zero exit.
func aRun(t *testing.T, as *recordingSim, args ...string) string {
	t.Helper()
	base := []string{"--base-url", as.url, "--model", "benchserve-sim", "--warmup-requests", "0",
		"--output-file", filepath.Join(t.TempDir(), "r.jsonl")}
	code, stdout, stderr := run(t, nil, append(base, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	return stdout
}

// With the same settings, drawing each request's group by Zipf rank sends
// the hot system prompts again and again, so the server's prefix cache
// hits more of the prompt tokens than with every group used equally.
func TestEndToEndGSPZipfHitsMore(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the GSP cache
	rate := map[string]float64{}
	for _, dist := range []string{"uniform", "zipf"} {
		as := newRecordingSim(t)
		args := []string{"--backend", "sglang", "--tokenizer", "o200k_base", "--dataset-name", "generated-shared-prefix",
			"--gsp-num-groups", "32", "--gsp-prompts-per-group", "4", "--gsp-system-prompt-len", "256",
			"--gsp-question-len", "16", "--gsp-output-len", "4", "--max-concurrency", "1", "--gsp-group-distribution", dist}
		if dist == "zipf" {
			args = append(args, "--gsp-zipf-alpha", "1.2")
		}
		out := aRun(t, as, args...)
		for _, line := range []string{"Group distribution: " + dist, "Total prompts: 128", "Successful requests:                     128"} {
			if !strings.Contains(out, line) {
				t.Errorf("%s: no %q in the output:\n%s", dist, line, out)
			}
		}
		hits, queries := as.metric(t, "vllm:prefix_cache_hits_total"), as.metric(t, "vllm:prefix_cache_queries_total")
		if queries == 0 {
			t.Fatalf("%s: no prompt tokens reached the server", dist)
		}
		rate[dist] = hits / queries
	}
	t.Logf("prefix-cache hit rate: uniform %.3f, zipf %.3f", rate["uniform"], rate["zipf"])
	// Uniform: each group's first request misses its system prompt, its
	// other three hit it: about 3/4 of the tokens.
	if rate["uniform"] < 0.6 || rate["uniform"] > 0.8 {
		t.Errorf("uniform hit rate %.3f, want about 0.7", rate["uniform"])
	}
	if rate["zipf"] <= rate["uniform"] {
		t.Errorf("zipf hit rate %.3f is not above uniform's %.3f", rate["zipf"], rate["uniform"])
	}
}

// Routing keys go out as a header naming the group, the same for every
// request of a group; with two turns a conversation's second round sends
// the first round's prompt, the server's real reply and the next question.
func TestEndToEndGSPTurnsAndRoutingKey(t *testing.T) {
	as := newRecordingSim(t)
	out := aRun(t, as, "--backend", "sglang-oai-chat", "--tokenizer", "o200k_base", "--dataset-name", "generated-shared-prefix",
		"--gsp-num-groups", "3", "--gsp-prompts-per-group", "2", "--gsp-system-prompt-len", "40", "--gsp-question-len", "8",
		"--gsp-output-len", "5", "--gsp-num-turns", "2", "--gsp-send-routing-key", "--gsp-range-ratio", "0.5")
	if !strings.Contains(out, "Cache bypassed (range_ratio=0.5, send_routing_key=True, num_turns=2)") || !strings.Contains(out, "Number of turns: 2") {
		t.Errorf("output:\n%s", out)
	}
	reqs := as.generation()
	if len(reqs) != 12 {
		t.Fatalf("%d requests, want 6 conversations × 2 rounds", len(reqs))
	}
	type message struct{ Role, Content string }
	keyRe := regexp.MustCompile(`^[0-9a-f]{8}_[0-9]{14}_([0-2])$`)
	systemOf := map[string]string{} // routing key → system prompt
	replyTo := map[string]string{}  // first round's prompt → the reply streamed
	var seconds [][]message
	for _, r := range reqs {
		var body struct {
			Messages []message `json:"messages"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		key := r.header.Get("X-SMG-Routing-Key")
		if !keyRe.MatchString(key) {
			t.Fatalf("routing key %q", key)
		}
		sys, _, ok := strings.Cut(body.Messages[0].Content, "\n\n")
		if !ok {
			t.Fatalf("first message %q has no system prompt", body.Messages[0].Content)
		}
		if prev, seen := systemOf[key]; seen && prev != sys {
			t.Errorf("routing key %s carries two system prompts", key)
		}
		systemOf[key] = sys
		switch len(body.Messages) {
		case 1:
			replyTo[body.Messages[0].Content] = aStreamedText(t, r.reply)
		case 3:
			seconds = append(seconds, body.Messages)
		default:
			t.Errorf("%d messages", len(body.Messages))
		}
	}
	if len(systemOf) != 3 || len(replyTo) != 6 || len(seconds) != 6 {
		t.Fatalf("%d routing keys, %d first rounds, %d second rounds; want 3, 6, 6", len(systemOf), len(replyTo), len(seconds))
	}
	for _, m := range seconds {
		reply, ok := replyTo[m[0].Content]
		if !ok || m[1].Role != "assistant" || m[1].Content != reply || reply == "" || m[2].Role != "user" || m[2].Content == "" {
			t.Errorf("second round %+v; the first round's reply was %q", m, reply)
		}
	}
}

// aStreamedText joins the content deltas of a streamed chat reply.
func aStreamedText(t *testing.T, sse []byte) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(string(sse), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, c := range chunk.Choices {
			b.WriteString(c.Delta.Content)
		}
	}
	return b.String()
}

// aTokenizerDir writes a small Hugging Face tokenizer with a chat
// template: whitespace-split words, "w0".."w99" known, the rest <unk>.
func aTokenizerDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	vocab := map[string]int{"<s>": 0, "<unk>": 1}
	for i := range 100 {
		vocab[fmt.Sprintf("w%d", i)] = i + 2
	}
	tj, _ := json.Marshal(map[string]any{
		"version":       "1.0",
		"added_tokens":  []map[string]any{{"id": 0, "content": "<s>", "special": true}, {"id": 1, "content": "<unk>", "special": true}},
		"pre_tokenizer": map[string]any{"type": "WhitespaceSplit"},
		"model":         map[string]any{"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
	})
	cfg, _ := json.Marshal(map[string]any{
		"bos_token": "<s>", "unk_token": "<unk>", "add_bos_token": true,
		"chat_template": "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }} {% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}",
	})
	os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644)
	os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), cfg, 0o644)
	return dir
}

// An openai dataset row sends its messages as they are and its own keys
// over the global extra body; --apply-chat-template on sharegpt sends the
// rendered template as the prompt.
func TestEndToEndOpenAIAndTemplates(t *testing.T) {
	tok := aTokenizerDir(t)
	dir := t.TempDir()
	reqs := `{"model": "other", "messages": [{"role": "system", "content": "w1"}, {"role": "user", "content": "w2 w3"}], "max_tokens": 6, "temperature": 0.7, "top_k": 5}
{"messages": [{"role": "user", "content": "w4"}], "tools": [{"type": "function", "function": {"name": "w5"}}]}
`
	path := filepath.Join(dir, "req.jsonl")
	os.WriteFile(path, []byte(reqs), 0o644)
	as := newRecordingSim(t)
	out := aRun(t, as, "--backend", "sglang-oai-chat", "--tokenizer", tok, "--dataset-name", "openai", "--dataset-path", path,
		"--num-prompts", "2", "--extra-request-body", `{"temperature": 0.1, "seed": 9}`, "--max-concurrency", "1")
	if !strings.Contains(out, "Loaded 2 OpenAI-format requests\n#Input tokens: ") {
		t.Errorf("output:\n%s", out)
	}
	got := map[string]bool{}
	for _, r := range as.generation() {
		var body map[string]any
		json.Unmarshal(r.body, &body)
		delete(body, "stream")
		delete(body, "stream_options")
		b, _ := json.Marshal(body)
		got[string(b)] = true
	}
	for _, want := range []string{
		`{"ignore_eos":true,"max_completion_tokens":6,"messages":[{"content":"w1","role":"system"},{"content":"w2 w3","role":"user"}],"model":"benchserve-sim","seed":9,"temperature":0.7,"top_k":5}`,
		`{"ignore_eos":true,"max_completion_tokens":256,"messages":[{"content":"w4","role":"user"}],"model":"benchserve-sim","seed":9,"temperature":0.1,"tools":[{"function":{"name":"w5"},"type":"function"}]}`,
	} {
		if !got[want] {
			t.Errorf("no request %s among %v", want, got)
		}
	}

	sg := filepath.Join(dir, "sg.json")
	os.WriteFile(sg, []byte(`[{"conversations": [{"value": "w7 w8"}, {"value": "w9 w10 w11"}]}]`), 0o644)
	as = newRecordingSim(t)
	aRun(t, as, "--backend", "sglang", "--tokenizer", tok, "--dataset-name", "sharegpt", "--dataset-path", sg,
		"--num-prompts", "1", "--apply-chat-template")
	r := as.generation()
	if len(r) != 1 || !strings.Contains(string(r[0].body), `"text": "[user] w7 w8 [assistant]"`) {
		t.Errorf("requests %+v", r)
	}
}

// speed-bench, longbench_v2 and custom run end to end.
func TestEndToEndJSONLDatasets(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"speed.jsonl":  `{"category": "mixed", "turns": ["Write a poem about the sea."]}` + "\n" + `{"category": "low_entropy", "turns": ["Count to ten."]}` + "\n",
		"lb.jsonl":     `{"context": "A long story.", "question": "Who?", "choice_A": "a", "choice_B": "b", "choice_C": "c", "choice_D": "d"}` + "\n",
		"custom.jsonl": `{"conversations": [{"role": "user", "content": "Hello there, friend"}, {"role": "assistant", "content": "Hi! How can I help?"}]}` + "\n",
	}
	for name, data := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
	}
	for _, c := range []struct {
		args []string
		n    int
		want string
	}{
		{[]string{"--dataset-name", "speed-bench", "--dataset-path", filepath.Join(dir, "speed.jsonl"), "--speed-bench-category", "mixed", "--num-prompts", "3", "--speed-bench-output-len", "7"}, 3,
			`"text": "Write a poem about the sea."`},
		{[]string{"--dataset-name", "longbench_v2", "--dataset-path", filepath.Join(dir, "lb.jsonl"), "--num-prompts", "1"}, 1,
			`"text": "A long story.\n\nQuestion: Who?\nA. a\nB. b\nC. c\nD. d\nAnswer:", "sampling_params": {"temperature": 0.0, "max_new_tokens": 10`},
		{[]string{"--dataset-name", "custom", "--dataset-path", filepath.Join(dir, "custom.jsonl"), "--num-prompts", "1"}, 1,
			`"text": "Hello there, friend"`},
	} {
		as := newRecordingSim(t)
		out := aRun(t, as, append([]string{"--backend", "sglang", "--tokenizer", "o200k_base"}, c.args...)...)
		reqs := as.generation()
		if len(reqs) != c.n || !strings.Contains(out, fmt.Sprintf("Successful requests:                     %d", c.n)) {
			t.Errorf("%v: %d requests\n%s", c.args, len(reqs), out)
			continue
		}
		for _, r := range reqs {
			if !strings.Contains(string(r.body), c.want) {
				t.Errorf("%v: body %s, want it to contain %s", c.args, r.body, c.want)
			}
		}
	}
}
