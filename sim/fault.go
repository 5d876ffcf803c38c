package sim

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// FaultKind is a failure the simulator can inject into a reply
// (docs/sim.md, "Faults").
type FaultKind uint8

// Fault kinds.
const (
	FaultNone        FaultKind = iota
	Fault429                   // 429 with an OpenAI error body, before the engine
	Fault500                   // 500, likewise
	Fault503                   // 503, likewise
	FaultReset                 // the connection is reset (RST) before any header
	FaultDisconnect            // the connection is closed after Arg content chunks
	FaultStall                 // the reply stops for Arg seconds after its first content chunk
	FaultMalformed             // a line that is not JSON after the first content chunk
	FaultErrorChunk            // an error object then [DONE] after the first content chunk
	FaultNoDone                // the stream ends without data: [DONE]
	FaultEmpty                 // 200 with zero output tokens
	FaultHugeLine              // an SSE comment line of Arg MiB before the second content chunk
	FaultSlowHeaders           // the headers go out Arg seconds late
	FaultTruncate              // the stream ends cleanly after Arg content chunks: no finish, usage or terminator
	FaultNoFinish              // the stream's finish reason is null
	FaultBadUsage              // the usage reports a quarter of the tokens sent
	FaultBadIndex              // one chunk carries a wrong index (choice, sequence_number, content block)
	FaultDiverge               // a temperature-0 reply diverges when more than Arg requests run at once
	numFaultKinds
)

var faultNames = [numFaultKinds]string{
	"none", "429", "500", "503", "reset", "disconnect", "stall", "malformed", "error-chunk", "no-done",
	"empty", "huge-line", "slow-headers", "truncate", "no-finish", "bad-usage", "bad-index", "diverge",
}

// faultArgs are the kinds that take an argument, with its default.
var faultArgs = map[FaultKind]float64{
	FaultDisconnect: 2, FaultStall: 2, FaultHugeLine: 10, FaultSlowHeaders: 2, FaultTruncate: 2, FaultDiverge: 1,
}

// FaultKinds lists the names of the kinds that inject something.
func FaultKinds() []string { return append([]string(nil), faultNames[1:]...) }

func (k FaultKind) String() string {
	if k < numFaultKinds {
		return faultNames[k]
	}
	return "fault(" + strconv.Itoa(int(k)) + ")"
}

// Fault is a kind with its argument (its default when none was given):
// chunks for disconnect and truncate, seconds for stall and slow-headers,
// MiB for huge-line, requests running at once for diverge.
type Fault struct {
	Kind FaultKind
	Arg  float64
}

// String is the fault as ParseFault reads it: "stall:2", "429".
func (f Fault) String() string {
	if _, ok := faultArgs[f.Kind]; ok {
		return f.Kind.String() + ":" + strconv.FormatFloat(f.Arg, 'g', -1, 64)
	}
	return f.Kind.String()
}

// FaultRate is a fault and the chance that a request gets it.
type FaultRate struct {
	Fault
	Rate float64
}

// FaultHeader forces one request's fault: "KIND[:ARG]" (";" also
// separates the argument), or "none".
const FaultHeader = "X-Sim-Fault"

// ParseFault reads "KIND[:ARG]".
func ParseFault(s string) (Fault, error) {
	name, arg, hasArg := s, "", false
	if i := strings.IndexAny(s, ":;"); i >= 0 {
		name, arg, hasArg = s[:i], s[i+1:], true
	}
	name = strings.TrimSpace(name)
	kind := FaultNone
	for k, n := range faultNames {
		if n == name {
			kind = FaultKind(k)
		}
	}
	if kind == FaultNone && name != "none" {
		return Fault{}, fmt.Errorf("unknown fault %q (choose from %s)", name, strings.Join(faultNames[:], ", "))
	}
	def, takesArg := faultArgs[kind]
	f := Fault{Kind: kind, Arg: def}
	if !hasArg {
		return f, nil
	}
	if !takesArg {
		return Fault{}, fmt.Errorf("fault %s takes no argument, got %q", name, arg)
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return Fault{}, fmt.Errorf("fault %s: the argument must be a number >= 0, got %q", name, arg)
	}
	switch {
	case (kind == FaultDisconnect || kind == FaultTruncate) && x != math.Trunc(x):
		return Fault{}, fmt.Errorf("fault %s: the argument is a whole number of chunks, got %q", name, arg)
	case kind == FaultDiverge && (x != math.Trunc(x) || x > 1<<20):
		return Fault{}, fmt.Errorf("fault diverge: the argument is a whole number of requests, got %q", arg)
	case kind == FaultHugeLine && (x == 0 || x > 1024):
		return Fault{}, fmt.Errorf("fault huge-line: the argument is MiB in (0, 1024], got %q", arg)
	case (kind == FaultStall || kind == FaultSlowHeaders) && x > 3600:
		return Fault{}, fmt.Errorf("fault %s: at most 3600 seconds, got %q", name, arg)
	}
	f.Arg = x
	return f, nil
}

// ParseFaultRate reads "KIND[:ARG]=RATE", the rate in [0, 1].
func ParseFaultRate(s string) (FaultRate, error) {
	spec, rate, ok := strings.Cut(s, "=")
	if !ok {
		return FaultRate{}, fmt.Errorf("expected KIND[:ARG]=RATE, got %q", s)
	}
	f, err := ParseFault(spec)
	if err != nil {
		return FaultRate{}, err
	}
	if f.Kind == FaultNone {
		return FaultRate{}, fmt.Errorf("expected a fault kind, got %q", spec)
	}
	r, err := strconv.ParseFloat(strings.TrimSpace(rate), 64)
	if err != nil || !(r >= 0 && r <= 1) {
		return FaultRate{}, fmt.Errorf("%s: the rate must be a number in [0, 1], got %q", spec, rate)
	}
	return FaultRate{Fault: f, Rate: r}, nil
}

// faultList writes the rates as --fault takes them.
func faultList(fs []FaultRate) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Fault.String() + "=" + strconv.FormatFloat(f.Rate, 'g', -1, 64)
	}
	return out
}

// validateFaults checks the rates: each in [0, 1], together at most 1.
func validateFaults(fs []FaultRate) error {
	sum := 0.0
	for _, f := range fs {
		if f.Kind == FaultNone || f.Kind >= numFaultKinds {
			return fmt.Errorf("--fault: not a fault kind: %v", f.Kind)
		}
		if !(f.Rate >= 0 && f.Rate <= 1) {
			return fmt.Errorf("--fault %s: the rate must be in [0, 1], got %v", f.Fault, f.Rate)
		}
		sum += f.Rate
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("--fault: the rates add up to %v, more than 1", sum)
	}
	return nil
}

// faultSalt separates the fault draws from the other uses of the seed.
const faultSalt = 0xfa017fa017fa017f

// drawFault picks request n's fault from the configured rates: a function
// of the seed and n only, so the same run of requests gets the same
// faults whatever the order they arrive in.
func (s *Server) drawFault(n uint64) Fault {
	if len(s.cfg.Faults) == 0 {
		return Fault{}
	}
	u := float64(mix64(uint64(s.cfg.Seed)^faultSalt^n*0x9e3779b97f4a7c15)>>11) / (1 << 53)
	for _, f := range s.cfg.Faults {
		if u < f.Rate {
			return f.Fault
		}
		u -= f.Rate
	}
	return Fault{}
}

// applies reports whether f can be done to j's reply: there is no [DONE]
// to leave out of a TensorRT stream or of a whole reply, an embedding
// cannot be empty, and a batch of prompts gets only the faults that act
// before the engine.
func (f Fault) applies(j *job) bool {
	if j.prompts != nil {
		switch f.Kind {
		case Fault429, Fault500, Fault503, FaultReset, FaultSlowHeaders:
			return true
		}
		return false
	}
	_, trt := j.f.(trtFormat)
	_, responses := j.f.(responsesFormat)
	_, native := j.f.(nativeFormat)
	_, oai := j.f.(completionsFormat)
	if _, chat := j.f.(chatFormat); chat {
		oai = true
	}
	switch f.Kind {
	case FaultNoDone, FaultTruncate:
		return j.stream && !trt
	case FaultEmpty, FaultDiverge:
		return !j.embed
	case FaultNoFinish: // a Responses stream's terminal event is its finish
		return j.stream && !trt && !responses
	case FaultBadUsage: // OpenAI's usage chunk only when asked for
		return j.stream && (oai && j.usage || !oai && !trt && !native)
	case FaultBadIndex:
		return j.stream && !trt && !native
	}
	return true
}

// divergeSalt separates the diverge fault's draws from the text's.
const divergeSalt = 0xd1e59e5ad1e59e5a

// greedySalt seeds the replies of temperature-0 requests from their
// prompts.
const greedySalt = 0x96eed796eed796ee

// promptSeed is the text seed of a temperature-0 request: a function of
// the server's seed and the prompt's tokens only, so that the same prompt
// gets the same reply.
func promptSeed(seed int64, prompt []int) uint64 {
	h := mix64(uint64(seed) ^ greedySalt)
	for _, id := range prompt {
		h = mix64(h ^ uint64(id))
	}
	return h
}

// isGreedy reports a temperature that samples greedily (TensorRT-LLM's
// clients send 1e-6 for 0).
func isGreedy(t *float64) bool { return t != nil && *t <= 1e-5 }

// reportedTokens is the completion count a reply's usage reports for n
// tokens sent: a quarter of them under the bad-usage fault.
func (j *job) reportedTokens(n int) int {
	if j.fault.Kind == FaultBadUsage {
		return n / 4
	}
	return n
}

// midStream reports the faults that act between content chunks (or, for
// a whole reply, between its headers and its body).
func (k FaultKind) midStream() bool {
	switch k {
	case FaultDisconnect, FaultStall, FaultMalformed, FaultErrorChunk, FaultHugeLine, FaultTruncate:
		return true
	}
	return false
}

// padding returns mib MiB of c (' ' or 'x'), shared by every huge-line
// reply of that size.
func padding(mib float64, c byte) []byte {
	n := int(mib * (1 << 20))
	padMu.Lock()
	defer padMu.Unlock()
	if len(padBufs[c]) < n {
		padBufs[c] = bytes.Repeat([]byte{c}, n)
	}
	return padBufs[c][:n]
}

var (
	padMu   sync.Mutex
	padBufs = map[byte][]byte{}
)
