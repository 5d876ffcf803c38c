package bench

// The plan file (--save-plan, --replay-plan): a header line, then one line
// per request with its planned offset and its bytes. Its format is a
// stable interface (docs/plan-format.md): a reader refuses a version it
// does not know, and within a version fields are only ever added.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The format's name and the one version this build writes and reads.
const (
	PlanFormat  = "benchserve-plan"
	PlanVersion = 1
)

// PlanHead is a plan file's first line: what wrote it and how.
type PlanHead struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Benchserve is the version of the benchserve that wrote it; Args its
	// flags as the run echoed them (benchmark_args).
	Benchserve string `json:"benchserve"`
	Args       string `json:"args"`
	// Backend and Path: --backend and the API path every request goes to
	// (after the base URL); BaseURL the saving run's, without credentials.
	Backend string `json:"backend"`
	Path    string `json:"path"`
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	// Tokenizer counted the prompts' tokens (prompt_len).
	Tokenizer string `json:"tokenizer"`
	Dataset   string `json:"dataset_name"`
	Seed      int    `json:"seed"`
	// RequestRate is the saving run's --request-rate ("inf" for none);
	// MaxConcurrency its --max-concurrency (null: none).
	RequestRate    Rate `json:"request_rate"`
	MaxConcurrency *int `json:"max_concurrency"`
	// Requests is how many request lines follow.
	Requests int `json:"requests"`
	// OmittedHeaders names the headers the requests carried that the
	// file leaves out because they hold secrets (their values are not
	// written anywhere).
	OmittedHeaders []string `json:"omitted_headers"`
}

// PlanLine is one request of a plan file.
type PlanLine struct {
	// Seq is the request's place in the plan, from 0; Offset its planned
	// send time, seconds from the measured run's start.
	Seq    *int    `json:"seq"`
	Offset *Offset `json:"offset"`
	Method string  `json:"method"`
	Path   string  `json:"path"`
	// Headers are the request's headers but the secrets (PlanHead's
	// OmittedHeaders) and the X-Request-Id each send makes anew.
	Headers map[string][]string `json:"headers"`
	// Body is the body when it is valid UTF-8 (a JSON body always is);
	// else BodyBase64 holds it. A line has exactly one of them.
	Body       *string `json:"body,omitempty"`
	BodyBase64 *string `json:"body_base64,omitempty"`
	// PromptLen is the prompt's tokens as the saving run counted them
	// (the input figures of a replay), OutputLen the output length asked
	// for (the output count when the server reports none).
	PromptLen int `json:"prompt_len"`
	OutputLen int `json:"output_len"`
	// AudioBytes and AudioSeconds are the audio file a transcription body
	// uploads (the audio figures of a replay); absent for other bodies.
	AudioBytes   int     `json:"audio_bytes,omitempty"`
	AudioSeconds float64 `json:"audio_seconds,omitempty"`
}

// Rate is a request rate, written as a number or "inf".
type Rate float64

// MarshalJSON writes r as a number, or "inf".
func (r Rate) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(r), 1) {
		return []byte(`"inf"`), nil
	}
	return json.Marshal(float64(r))
}

// UnmarshalJSON reads a number > 0, or "inf".
func (r *Rate) UnmarshalJSON(b []byte) error {
	if string(b) == `"inf"` {
		*r = Rate(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil || !(f > 0) {
		return fmt.Errorf("request_rate: %s is neither a number > 0 nor \"inf\"", b)
	}
	*r = Rate(f)
	return nil
}

// Offset is a time from the run's start, written as seconds with nine
// decimals: nanoseconds, exactly.
type Offset time.Duration

// MarshalJSON writes o as seconds with nine decimals.
func (o Offset) MarshalJSON() ([]byte, error) {
	ns := int64(o)
	b := strconv.AppendInt(nil, ns/1e9, 10)
	return fmt.Appendf(b, ".%09d", ns%1e9), nil
}

// UnmarshalJSON reads seconds >= 0, to the nanosecond.
func (o *Offset) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || !(f >= 0) || f > 1e9 {
		return fmt.Errorf("offset: %s is not a number of seconds >= 0", b)
	}
	*o = Offset(math.Round(f * 1e9))
	return nil
}

// secretHeader: a header whose value the plan file leaves out.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "x-api-key", "api-key":
		return true
	}
	for _, s := range []string{"token", "secret", "password", "apikey", "api-key", "credential"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// planRequest is one request of a plan in memory.
type planRequest struct {
	at        time.Duration
	header    http.Header
	body      []byte
	promptLen int
	outputLen int
	// The uploaded audio a transcription body carries (0: none).
	audioBytes   int
	audioSeconds float64
}

// writePlan writes head and reqs to w in the plan file's format; head's
// Requests and OmittedHeaders are set from reqs, whose headers lose their
// secrets and X-Request-Id.
func writePlan(w io.Writer, head PlanHead, path string, reqs []planRequest) error {
	omitted := map[string]bool{}
	lines := make([]PlanLine, len(reqs))
	for i, q := range reqs {
		h := map[string][]string{}
		for k, v := range q.header {
			switch {
			case secretHeader(k):
				omitted[http.CanonicalHeaderKey(k)] = true
			case !strings.EqualFold(k, requestIDHeader):
				h[k] = v
			}
		}
		seq, at := i, Offset(q.at)
		l := PlanLine{Seq: &seq, Offset: &at, Method: http.MethodPost, Path: path, Headers: h, PromptLen: q.promptLen, OutputLen: q.outputLen,
			AudioBytes: q.audioBytes, AudioSeconds: q.audioSeconds}
		if utf8.Valid(q.body) {
			s := string(q.body)
			l.Body = &s
		} else {
			s := base64.StdEncoding.EncodeToString(q.body)
			l.BodyBase64 = &s
		}
		lines[i] = l
	}
	head.Format, head.Version, head.Path, head.Requests = PlanFormat, PlanVersion, path, len(reqs)
	head.OmittedHeaders = []string{}
	for k := range omitted {
		head.OmittedHeaders = append(head.OmittedHeaders, k)
	}
	slices.Sort(head.OmittedHeaders)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(head); err != nil {
		return err
	}
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// requestIDHeader is the id each send makes anew (backend's).
const requestIDHeader = "X-Request-Id"

// readPlan reads a plan file whole and checks every line, so that a bad
// file is refused, naming its line, before anything is sent.
func readPlan(name string) (PlanHead, []planRequest, error) {
	f, err := os.Open(name)
	if err != nil {
		return PlanHead{}, nil, usage("--replay-plan: %v", err)
	}
	defer f.Close()
	head, reqs, err := parsePlan(f)
	if err != nil {
		return PlanHead{}, nil, usage("--replay-plan: %s:%v", name, err)
	}
	return head, reqs, nil
}

// ReadPlanHead reads a plan file's header (the command line takes the
// backend, model and load a replay defaults to from it).
func ReadPlanHead(name string) (PlanHead, error) {
	f, err := os.Open(name)
	if err != nil {
		return PlanHead{}, usage("--replay-plan: %v", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return PlanHead{}, usage("--replay-plan: %s: %v", name, err)
	}
	head, err := parseHead(line)
	if err != nil {
		return PlanHead{}, usage("--replay-plan: %s:1: %v", name, err)
	}
	return head, nil
}

// lineError is a plan file's error at a line (from 1).
type lineError struct {
	n   int
	err error
}

func (e lineError) Error() string { return fmt.Sprintf("%d: %v", e.n, e.err) }

// parsePlan reads a plan file from r; its errors start with the line
// number and a colon.
func parsePlan(r io.Reader) (PlanHead, []planRequest, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		head PlanHead
		reqs []planRequest
		prev time.Duration
	)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return head, nil, lineError{n, err}
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			if n == 1 {
				return head, nil, lineError{n, errors.New("the file is empty: no plan header")}
			}
			if len(reqs) != head.Requests {
				return head, nil, lineError{n - 1, fmt.Errorf("the file ends after %d requests; its header says %d (a cut file?)", len(reqs), head.Requests)}
			}
			return head, reqs, nil
		}
		if n == 1 {
			if head, err = parseHead(line); err != nil {
				return head, nil, lineError{n, err}
			}
			continue
		}
		q, perr := parseLine(line, n-2, head.Path)
		if perr != nil {
			return head, nil, lineError{n, perr}
		}
		if q.at < prev {
			return head, nil, lineError{n, fmt.Errorf("offset %s is before the previous request's %s: the lines must be in send order", fmtOffset(q.at), fmtOffset(prev))}
		}
		if len(reqs) == head.Requests {
			return head, nil, lineError{n, fmt.Errorf("more requests than the header's %d", head.Requests)}
		}
		prev = q.at
		reqs = append(reqs, q)
	}
}

func fmtOffset(d time.Duration) string {
	b, _ := Offset(d).MarshalJSON()
	return string(b) + " s"
}

// parseHead checks a plan file's first line.
func parseHead(line []byte) (PlanHead, error) {
	var head PlanHead
	var probe struct {
		Format  *string `json:"format"`
		Version *int    `json:"version"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return head, fmt.Errorf("not a plan header (a JSON object with format %q and version): %v", PlanFormat, err)
	}
	switch {
	case probe.Format == nil || *probe.Format != PlanFormat:
		return head, fmt.Errorf("not a benchserve plan: the header's format is not %q", PlanFormat)
	case probe.Version == nil:
		return head, errors.New("the plan header has no version")
	case *probe.Version != PlanVersion:
		return head, fmt.Errorf("plan format version %d: this benchserve reads version %d only", *probe.Version, PlanVersion)
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return head, fmt.Errorf("the plan header: %v", err)
	}
	switch {
	case head.Backend == "":
		return head, errors.New("the plan header names no backend")
	case !strings.HasPrefix(head.Path, "/"):
		return head, fmt.Errorf("the plan header's path %q does not start with /", head.Path)
	case head.Requests < 1:
		return head, fmt.Errorf("the plan header says %d requests: a plan has at least 1", head.Requests)
	case head.RequestRate == 0:
		return head, errors.New("the plan header has no request_rate")
	}
	return head, nil
}

// parseLine checks request line seq of a plan whose requests go to path.
func parseLine(line []byte, seq int, path string) (planRequest, error) {
	var l PlanLine
	var q planRequest
	if len(bytes.TrimSpace(line)) == 0 {
		return q, errors.New("an empty line: every line after the header is a request")
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return q, fmt.Errorf("not a request line (a JSON object): %v", err)
	}
	switch {
	case l.Seq == nil || *l.Seq != seq:
		return q, fmt.Errorf("seq must be %d (the request's place in the plan)", seq)
	case l.Offset == nil:
		return q, errors.New("the request has no offset")
	case l.Method != http.MethodPost:
		return q, fmt.Errorf("method %q: plans of version %d send POST only", l.Method, PlanVersion)
	case l.Path != path:
		return q, fmt.Errorf("path %q is not the plan header's %q", l.Path, path)
	case (l.Body == nil) == (l.BodyBase64 == nil):
		return q, errors.New("a request has exactly one of body and body_base64")
	case l.PromptLen < 0 || l.OutputLen < 0:
		return q, errors.New("prompt_len and output_len must be >= 0")
	case l.AudioBytes < 0 || !(l.AudioSeconds >= 0) || (l.AudioBytes == 0) != (l.AudioSeconds == 0):
		return q, errors.New("audio_bytes and audio_seconds must be > 0 together, or both absent")
	}
	q.at, q.promptLen, q.outputLen = time.Duration(*l.Offset), l.PromptLen, l.OutputLen
	q.audioBytes, q.audioSeconds = l.AudioBytes, l.AudioSeconds
	if l.Body != nil {
		q.body = []byte(*l.Body)
	} else {
		b, err := base64.StdEncoding.DecodeString(*l.BodyBase64)
		if err != nil {
			return q, fmt.Errorf("body_base64: %v", err)
		}
		q.body = b
	}
	if len(l.Headers) > 0 {
		q.header = http.Header{}
		for k, v := range l.Headers {
			if k == "" || len(v) == 0 {
				return q, fmt.Errorf("header %q has no value", k)
			}
			q.header[http.CanonicalHeaderKey(k)] = v
		}
	}
	return q, nil
}
