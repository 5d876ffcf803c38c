package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchserve/internal/exit"
	"benchserve/record"
	"benchserve/sim"
)

// Each stream integrity counter is proven by its simulator fault: over a
// run with the fault at 25%, the counter equals the faults the simulator
// injected, every other counter is 0, the console names it, and the
// verdict warns; a run without faults has one line, all streams complete.
func TestStreamIntegrityByFault(t *testing.T) {
	const n = 60
	cases := []struct {
		fault, backend string
		problem        record.Integrity // 0: none
	}{
		{"", "vllm", 0},
		{"truncate:2", "vllm", record.NoTerminator},
		{"no-done", "sglang-oai-chat", record.NoTerminator},
		{"no-finish", "vllm-chat", record.NoFinish},
		{"no-finish", "sglang", record.NoFinish},
		{"no-finish", "anthropic-messages", record.NoFinish},
		{"bad-usage", "vllm", record.UsageMismatch},
		{"bad-usage", "openai-responses", record.UsageMismatch},
		{"bad-index", "vllm-chat", record.BadIndex},
		{"bad-index", "openai-responses", record.BadIndex},
		{"bad-index", "anthropic-messages", record.BadIndex},
		{"error-chunk", "vllm", record.ErrorAfterContent},
	}
	for _, c := range cases {
		t.Run(c.fault+"/"+c.backend, func(t *testing.T) {
			var faults []sim.FaultRate
			if c.fault != "" {
				f, err := sim.ParseFault(c.fault)
				if err != nil {
					t.Fatal(err)
				}
				faults = append(faults, sim.FaultRate{Fault: f, Rate: 0.25})
			}
			_, base := newFaultSim(t, faults...)
			out := filepath.Join(t.TempDir(), "res.jsonl")
			code, stdout, stderr := run(t, nil, "--backend", c.backend, "--base-url", base, "--dataset-name", "random-ids",
				"--random-input-len", "16", "--random-output-len", "16", "--random-range-ratio", "1", "--num-prompts", strconv.Itoa(n),
				"--warmup-requests", "0", "--max-concurrency", "8", "--output-file", out)
			if code != exit.OK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			injectedN := 0
			if c.fault != "" {
				f, _ := sim.ParseFault(c.fault)
				injectedN = injected(t, base, f.Kind.String())
				if injectedN == 0 {
					t.Fatal("the simulator injected no fault")
				}
			}
			m := readLine(t, out)
			si, _ := m["stream_integrity"].(map[string]any)
			if num(t, si, "streams") != n {
				t.Errorf("streams %v, want %d", si["streams"], n)
			}
			for _, b := range record.IntegrityProblems {
				want := 0
				if b == c.problem {
					want = injectedN
				}
				if got := num(t, si, b.Name()); got != float64(want) {
					t.Errorf("%s = %v, want %d (injected %d)", b.Name(), got, want, injectedN)
				}
			}
			if num(t, m, "flawed_streams") != float64(injectedN) {
				t.Errorf("flawed_streams %v, want %d", m["flawed_streams"], injectedN)
			}
			verdict, _ := m["client_verdict"].(string)
			if c.problem == 0 {
				if got := field(t, stdout, "Stream integrity:"); got != "all "+strconv.Itoa(n)+" streams complete" {
					t.Errorf("console: %q", got)
				}
				if strings.Contains(verdict, "warning") {
					t.Errorf("verdict %q", verdict)
				}
				return
			}
			line := map[record.Integrity]string{
				record.NoTerminator: "Streams without terminator:", record.NoFinish: "Streams without finish reason:",
				record.UsageMismatch: "Usage disagreeing with content:", record.BadIndex: "Non-monotonic or duplicate index:",
				record.ErrorAfterContent: "Error event after content:",
			}[c.problem]
			if got := field(t, stdout, line); got != strconv.Itoa(injectedN)+" of "+strconv.Itoa(n) {
				t.Errorf("console %s %q, want %d of %d", line, got, injectedN, n)
			}
			if strings.Contains(stdout, "Stream integrity:") {
				t.Errorf("the all-complete line beside a problem:\n%s", stdout)
			}
			if !strings.Contains(verdict, "warning: "+strconv.Itoa(injectedN)+" of "+strconv.Itoa(n)+" streams") {
				t.Errorf("verdict %q", verdict)
			}
		})
	}
}
