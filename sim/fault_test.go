package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseFault(t *testing.T) {
	good := map[string]Fault{
		"429":            {Fault429, 0},
		"reset":          {FaultReset, 0},
		"stall":          {FaultStall, 2},
		"stall:0.25":     {FaultStall, 0.25},
		"stall;3":        {FaultStall, 3},
		"disconnect":     {FaultDisconnect, 2},
		"disconnect:0":   {FaultDisconnect, 0},
		"huge-line:0.5":  {FaultHugeLine, 0.5},
		"slow-headers:1": {FaultSlowHeaders, 1},
		"none":           {},
	}
	for s, want := range good {
		got, err := ParseFault(s)
		if err != nil || got != want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", s, got, err, want)
		}
		if want.Kind != FaultNone {
			if back, _ := ParseFault(got.String()); back != got {
				t.Errorf("%q: String %q does not read back", s, got.String())
			}
		}
	}
	bad := map[string]string{
		"418":             `unknown fault "418" (choose from none, 429, 500, 503, reset, disconnect, stall, malformed, error-chunk, no-done, empty, huge-line, slow-headers, truncate, no-finish, bad-usage, bad-index, diverge)`,
		"429:1":           `fault 429 takes no argument, got "1"`,
		"stall:-1":        `fault stall: the argument must be a number >= 0, got "-1"`,
		"stall:nan":       `fault stall: the argument must be a number >= 0, got "nan"`,
		"stall:9999":      `fault stall: at most 3600 seconds, got "9999"`,
		"disconnect:1.5":  `fault disconnect: the argument is a whole number of chunks, got "1.5"`,
		"huge-line:0":     `fault huge-line: the argument is MiB in (0, 1024], got "0"`,
		"huge-line:2000":  `fault huge-line: the argument is MiB in (0, 1024], got "2000"`,
		"slow-headers:x":  `fault slow-headers: the argument must be a number >= 0, got "x"`,
		"":                `unknown fault "" (choose from none, 429, 500, 503, reset, disconnect, stall, malformed, error-chunk, no-done, empty, huge-line, slow-headers, truncate, no-finish, bad-usage, bad-index, diverge)`,
		"error-chunk:1:2": `fault error-chunk takes no argument, got "1:2"`,
	}
	for s, want := range bad {
		if _, err := ParseFault(s); err == nil || err.Error() != want {
			t.Errorf("ParseFault(%q): %v, want %s", s, err, want)
		}
	}
	for s, want := range map[string]string{
		"stall:1=0.5": "", "429=1": "", "500=0": "",
		"429":        `expected KIND[:ARG]=RATE, got "429"`,
		"429=1.5":    `429: the rate must be a number in [0, 1], got "1.5"`,
		"429=-0.1":   `429: the rate must be a number in [0, 1], got "-0.1"`,
		"none=0.1":   `expected a fault kind, got "none"`,
		"stall:x=.1": `fault stall: the argument must be a number >= 0, got "x"`,
	} {
		_, err := ParseFaultRate(s)
		if (err == nil) != (want == "") || err != nil && err.Error() != want {
			t.Errorf("ParseFaultRate(%q): %v, want %q", s, err, want)
		}
	}
	cfg, _ := Preset(PresetInstant)
	cfg.Faults = []FaultRate{{Fault{Fault429, 0}, 0.6}, {Fault{Fault500, 0}, 0.5}}
	if err := cfg.Validate(); err == nil || err.Error() != "--fault: the rates add up to 1.1, more than 1" {
		t.Errorf("rates over 1: %v", err)
	}
}

// The draws follow the rates, depend only on the seed and the request
// number, and change with the seed.
func TestDrawFault(t *testing.T) {
	cfg, _ := Preset(PresetInstant)
	cfg.Faults = []FaultRate{{Fault{Fault429, 0}, 0.2}, {Fault{FaultStall, 1}, 0.05}}
	draws := func(seed int64) []Fault {
		c := cfg
		c.Seed = seed
		s := &Server{cfg: c}
		out := make([]Fault, 20000)
		for i := range out {
			out[i] = s.drawFault(uint64(i + 1))
		}
		return out
	}
	a, b, c := draws(1), draws(1), draws(2)
	counts := map[Fault]int{}
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d differs with the same seed", i)
		}
		if a[i] == c[i] {
			same++
		}
		counts[a[i]]++
	}
	if same == len(a) {
		t.Error("another seed gave the same faults")
	}
	// Within 5 standard deviations of n·p.
	for f, p := range map[Fault]float64{{Fault429, 0}: 0.2, {FaultStall, 1}: 0.05, {}: 0.75} {
		n := float64(len(a))
		if d := math.Abs(float64(counts[f]) - n*p); d > 5*math.Sqrt(n*p*(1-p)) {
			t.Errorf("%v: %d draws, want about %.0f", f, counts[f], n*p)
		}
	}
}

// faultReply is what a plain client saw of one request.
type faultReply struct {
	status  int
	body    []byte
	err     error         // from the request or from reading the body
	headers time.Duration // until the headers came
	gaps    []time.Duration
}

// faultDo sends body to url with the X-Sim-Fault header (if any) and reads
// the reply, noting the time between reads that brought data.
func faultDo(t *testing.T, url, body, fault string) faultReply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if fault != "" {
		req.Header.Set(FaultHeader, fault)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	st := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return faultReply{err: err}
	}
	defer resp.Body.Close()
	r := faultReply{status: resp.StatusCode, headers: time.Since(st)}
	last := time.Now()
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			r.body = append(r.body, buf[:n]...)
			r.gaps = append(r.gaps, time.Since(last))
			last = time.Now()
		}
		if err == io.EOF {
			return r
		}
		if err != nil {
			r.err = err
			return r
		}
	}
}

func maxGap(g []time.Duration) time.Duration {
	var m time.Duration
	for _, x := range g {
		m = max(m, x)
	}
	return m
}

// dataLines are the "data: " payloads of a stream, comment lines apart.
func dataLines(body []byte) (data []string, comments []int) {
	for _, l := range strings.Split(string(body), "\n") {
		switch {
		case strings.HasPrefix(l, "data: "):
			data = append(data, strings.TrimPrefix(l, "data: "))
		case strings.HasPrefix(l, ":"):
			comments = append(comments, len(l))
		}
	}
	return data, comments
}

// Each fault, forced by the header on a completions stream, does what
// docs/sim.md says, and the truth and /metrics record it.
func TestFaultsOnTheStream(t *testing.T) {
	_, url := newTestServer(t, nil)
	const body = `{"model":"benchserve-sim","prompt":"hello there","max_tokens":6,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`
	textChunks := func(data []string) int {
		n := 0
		for _, d := range data {
			var c struct {
				Choices []struct{ Text string } `json:"choices"`
			}
			if json.Unmarshal([]byte(d), &c) == nil && len(c.Choices) > 0 && c.Choices[0].Text != "" {
				n++
			}
		}
		return n
	}
	cases := []struct {
		fault string
		check func(t *testing.T, r faultReply, data []string, comments []int)
	}{
		{"none", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || textChunks(data) != 6 || data[len(data)-1] != "[DONE]" {
				t.Errorf("%v, %d chunks: %q", r.err, textChunks(data), data)
			}
		}},
		{"429", func(t *testing.T, r faultReply, _ []string, _ []int) {
			if r.status != 429 || !strings.HasPrefix(string(r.body), `{"error":{"message":"Rate limit reached (simulated fault 429).","type":"RateLimitError","param":null,"code":429}}`) {
				t.Errorf("%d %s", r.status, r.body)
			}
		}},
		{"500", func(t *testing.T, r faultReply, _ []string, _ []int) {
			if r.status != 500 || !strings.Contains(string(r.body), `"code":500`) {
				t.Errorf("%d %s", r.status, r.body)
			}
		}},
		{"503", func(t *testing.T, r faultReply, _ []string, _ []int) {
			if r.status != 503 || !strings.Contains(string(r.body), `"code":503`) {
				t.Errorf("%d %s", r.status, r.body)
			}
		}},
		{"reset", func(t *testing.T, r faultReply, _ []string, _ []int) {
			if r.status != 0 || !(errors.Is(r.err, syscall.ECONNRESET) || errors.Is(r.err, io.EOF)) {
				t.Errorf("status %d, error %v", r.status, r.err)
			}
		}},
		{"disconnect:2", func(t *testing.T, r faultReply, data []string, _ []int) {
			if !errors.Is(r.err, io.ErrUnexpectedEOF) || textChunks(data) != 2 {
				t.Errorf("error %v, %d chunks", r.err, textChunks(data))
			}
		}},
		{"disconnect:0", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.status != 200 || !errors.Is(r.err, io.ErrUnexpectedEOF) || len(data) != 0 {
				t.Errorf("status %d, error %v, %q", r.status, r.err, data)
			}
		}},
		{"stall:0.3", func(t *testing.T, r faultReply, data []string, _ []int) {
			// The gaps are timed at this test's reads: a late read of the
			// chunk before the stall shortens it a little.
			if r.err != nil || textChunks(data) != 6 || maxGap(r.gaps) < 250*time.Millisecond {
				t.Errorf("error %v, %d chunks, longest gap %v", r.err, textChunks(data), maxGap(r.gaps))
			}
		}},
		{"malformed", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || textChunks(data) != 6 || !json.Valid([]byte(data[0])) || json.Valid([]byte(data[1])) {
				t.Errorf("error %v, %q", r.err, data)
			}
		}},
		{"error-chunk", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || len(data) != 3 || textChunks(data) != 1 || data[1] != string(errorObject) || data[2] != "[DONE]" {
				t.Errorf("error %v, %q", r.err, data)
			}
		}},
		{"no-done", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || textChunks(data) != 6 || data[len(data)-1] == "[DONE]" || !strings.Contains(data[len(data)-1], `"usage":{`) {
				t.Errorf("error %v, %q", r.err, data)
			}
		}},
		{"empty", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || textChunks(data) != 0 || data[len(data)-1] != "[DONE]" || !strings.Contains(string(r.body), `"completion_tokens":0`) {
				t.Errorf("error %v, %q", r.err, data)
			}
		}},
		{"huge-line:1", func(t *testing.T, r faultReply, data []string, comments []int) {
			if r.err != nil || textChunks(data) != 6 || len(comments) != 1 || comments[0] != 2+1<<20 {
				t.Errorf("error %v, %d chunks, comment lines %v", r.err, textChunks(data), comments)
			}
		}},
		{"slow-headers:0.3", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || textChunks(data) != 6 || r.headers < 300*time.Millisecond {
				t.Errorf("error %v, %d chunks, headers after %v", r.err, textChunks(data), r.headers)
			}
		}},
		{"truncate:2", func(t *testing.T, r faultReply, data []string, _ []int) {
			// A clean end of the body after two chunks: no finish, usage or [DONE].
			if r.err != nil || len(data) != 2 || textChunks(data) != 2 || strings.Contains(string(r.body), `"finish_reason":"`) {
				t.Errorf("error %v, %q", r.err, data)
			}
		}},
		{"no-finish", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || textChunks(data) != 6 || data[len(data)-1] != "[DONE]" || strings.Contains(string(r.body), `"finish_reason":"`) {
				t.Errorf("error %v, %q", r.err, data)
			}
		}},
		{"bad-usage", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || textChunks(data) != 6 || !strings.Contains(data[len(data)-2], `"completion_tokens":1,`) {
				t.Errorf("error %v, %q", r.err, data)
			}
		}},
		{"bad-index", func(t *testing.T, r faultReply, data []string, _ []int) {
			if r.err != nil || textChunks(data) != 6 || !strings.Contains(data[1], `"index":1,`) || strings.Contains(data[2], `"index":1,`) {
				t.Errorf("error %v, %q", r.err, data)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			r := faultDo(t, url+"/v1/completions", body, c.fault)
			data, comments := dataLines(r.body)
			c.check(t, r, data, comments)
		})
	}

	// The truth has each request's fault, in order, and /metrics counts them.
	truth := decode[struct {
		Requests []struct {
			Fault    string   `json:"fault"`
			FaultArg *float64 `json:"fault_arg"`
			Error    string   `json:"error"`
		} `json:"requests"`
	}](t, do(t, http.MethodGet, url+"/sim/truth", "").body)
	got := map[string]int{}
	for _, r := range truth.Requests {
		name := r.Fault
		if r.FaultArg != nil {
			name += ":" + strconv.FormatFloat(*r.FaultArg, 'g', -1, 64)
		}
		got[name]++
	}
	for _, c := range cases {
		name := c.fault
		if name == "none" {
			name = ""
		}
		if got[name] != 1 {
			t.Errorf("truth: %d requests with fault %q; all: %v", got[name], name, got)
		}
	}
	metrics := string(do(t, http.MethodGet, url+"/metrics", "").body)
	for kind, n := range map[string]int{"429": 1, "disconnect": 2, "stall": 1, "empty": 1, "no-done": 1, "huge-line": 1, "slow-headers": 1, "truncate": 1, "bad-index": 1} {
		want := `sim:faults_injected_total{kind="` + kind + `",model_name="benchserve-sim"} ` + strconv.Itoa(n) + "\n"
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// Whole replies get the faults that make sense for them.
func TestFaultsOnWholeReplies(t *testing.T) {
	_, url := newTestServer(t, nil)
	const body = `{"model":"benchserve-sim","prompt":"hello there","max_tokens":6,"ignore_eos":true}`
	valid := func(r faultReply) bool { return json.Valid(bytes.TrimSpace(r.body)) }
	for fault, ok := range map[string]func(r faultReply) bool{
		"none":       func(r faultReply) bool { return r.err == nil && valid(r) },
		"429":        func(r faultReply) bool { return r.status == 429 },
		"disconnect": func(r faultReply) bool { return r.status == 200 && errors.Is(r.err, io.ErrUnexpectedEOF) },
		"stall:0.3": func(r faultReply) bool {
			return r.err == nil && valid(r) && maxGap(r.gaps)+r.headers >= 300*time.Millisecond
		},
		"malformed":      func(r faultReply) bool { return r.err == nil && r.status == 200 && !valid(r) },
		"error-chunk":    func(r faultReply) bool { return r.err == nil && string(r.body) == string(errorObject) },
		"empty":          func(r faultReply) bool { return valid(r) && strings.Contains(string(r.body), `"text":""`) },
		"huge-line:0.5":  func(r faultReply) bool { return r.err == nil && valid(r) && len(r.body) > 1<<19 },
		"slow-headers:0": func(r faultReply) bool { return r.err == nil && valid(r) },
	} {
		r := faultDo(t, url+"/v1/completions", body, fault)
		if !ok(r) {
			t.Errorf("%s: status %d, error %v, body %.200q", fault, r.status, r.err, r.body)
		}
	}
	// Faults that cannot apply are refused when forced.
	for _, c := range []struct{ path, body, fault string }{
		{"/v1/completions", body, "no-done"},
		{"/v2/models/ensemble/generate_stream", `{"text_input":"a","max_tokens":2,"min_length":2}`, "no-done"},
		{"/v1/embeddings", `{"model":"benchserve-sim","input":"a"}`, "empty"},
		{"/v1/completions", body, "sometimes"},
	} {
		r := faultDo(t, url+c.path, c.body, c.fault)
		if r.status != 400 || !strings.Contains(string(r.body), "X-Sim-Fault: ") {
			t.Errorf("%s %s: %d %s", c.path, c.fault, r.status, r.body)
		}
	}
}

// Faults drawn at a rate: the truth's count of each matches /metrics, and
// requests without a fault are unharmed.
func TestFaultRates(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) {
		c.Faults = []FaultRate{{Fault{Fault503, 0}, 0.3}, {Fault{FaultErrorChunk, 0}, 0.2}}
	})
	const body = `{"model":"benchserve-sim","prompt":"hi","max_tokens":3,"ignore_eos":true,"stream":true}`
	byFault := map[string]int{}
	for range 200 {
		r := faultDo(t, url+"/v1/completions", body, "")
		switch data, _ := dataLines(r.body); {
		case r.status == 503:
			byFault["503"]++
		case len(data) > 1 && data[1] == string(errorObject):
			byFault["error-chunk"]++
		case r.err == nil && len(data) == 5 && data[4] == "[DONE]":
			byFault[""]++
		default:
			t.Fatalf("unexpected reply %d %v %q", r.status, r.err, r.body)
		}
	}
	truth := decode[struct {
		Requests []struct {
			Fault string `json:"fault"`
		} `json:"requests"`
	}](t, do(t, http.MethodGet, url+"/sim/truth", "").body)
	inTruth := map[string]int{}
	for _, r := range truth.Requests {
		inTruth[r.Fault]++
	}
	metrics := string(do(t, http.MethodGet, url+"/metrics", "").body)
	for kind, n := range byFault {
		if inTruth[kind] != n {
			t.Errorf("fault %q: %d seen, %d in the truth", kind, n, inTruth[kind])
		}
		if kind != "" && !strings.Contains(metrics, `sim:faults_injected_total{kind="`+kind+`",model_name="benchserve-sim"} `+strconv.Itoa(n)+"\n") {
			t.Errorf("metrics do not count %d %s", n, kind)
		}
	}
	if byFault["503"] < 30 || byFault["error-chunk"] < 15 {
		t.Errorf("rates 0.3 and 0.2 over 200 requests gave %v", byFault)
	}
}
