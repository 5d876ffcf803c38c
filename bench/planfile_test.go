package bench

import (
	"bytes"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A plan written and read back gives the same requests byte for byte:
// offsets to the nanosecond, bodies that are not UTF-8 (as base64) and
// bodies with every JSON-escaped character; the secret headers and the
// per-send X-Request-Id are left out, and the header names the secrets.
func TestPlanFileRoundTrip(t *testing.T) {
	reqs := []planRequest{
		{at: 0, body: []byte(`{"prompt": "a<b>&\u00e9 \"q\"\n\t\\"}`), promptLen: 3, outputLen: 7,
			header: http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer sk-123"}, "X-Request-Id": {"r1"}, "X-Team": {"a", "b"}}},
		{at: 1500*time.Millisecond + 7, body: []byte{0xff, 0xfe, '{', 0}, promptLen: 0, outputLen: 1,
			header: http.Header{"X-Api-Key": {"k"}, "X-Smg-Routing-Key": {"group-1"}}},
		{at: 1500*time.Millisecond + 7, body: []byte(`{}`)},
		{at: 86400*time.Second + 999999999, body: []byte("é")},
		{at: 86400*time.Second + 999999999, body: []byte("--b\r\n\x00RIFF"), audioBytes: 160044, audioSeconds: 5},
	}
	var buf bytes.Buffer
	head := PlanHead{Backend: "vllm", Model: "m", RequestRate: Rate(math.Inf(1))}
	if err := writePlan(&buf, head, "/v1/completions", reqs); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, secret := range []string{"sk-123", `"k"`, "r1"} {
		if strings.Contains(text, secret) {
			t.Errorf("the file holds %s:\n%s", secret, text)
		}
	}
	got, back, err := parsePlan(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != PlanFormat || got.Version != PlanVersion || got.Requests != len(reqs) || got.Path != "/v1/completions" ||
		!math.IsInf(float64(got.RequestRate), 1) || strings.Join(got.OmittedHeaders, ",") != "Authorization,X-Api-Key" {
		t.Errorf("header %+v", got)
	}
	if len(back) != len(reqs) {
		t.Fatalf("%d requests back, want %d", len(back), len(reqs))
	}
	for i, q := range back {
		w := reqs[i]
		if q.at != w.at || !bytes.Equal(q.body, w.body) || q.promptLen != w.promptLen || q.outputLen != w.outputLen ||
			q.audioBytes != w.audioBytes || q.audioSeconds != w.audioSeconds {
			t.Errorf("request %d: %v %q %d %d, want %v %q", i, q.at, q.body, q.promptLen, q.outputLen, w.at, w.body)
		}
	}
	if h := back[0].header; h.Get("Authorization") != "" || h.Get("X-Request-Id") != "" || strings.Join(h.Values("X-Team"), ",") != "a,b" || h.Get("Content-Type") != "application/json" {
		t.Errorf("request 0's headers %v", h)
	}
	if h := back[1].header; h.Get("X-Api-Key") != "" || h.Get("X-Smg-Routing-Key") != "group-1" {
		t.Errorf("request 1's headers %v", h)
	}
	if !strings.Contains(text, `"body_base64":`) || !strings.Contains(text, `"offset":86400.999999999`) {
		t.Errorf("the file:\n%s", text)
	}
	// Written twice, the same bytes: nothing in it depends on the clock
	// or on map order.
	var again bytes.Buffer
	if err := writePlan(&again, head, "/v1/completions", reqs); err != nil || again.String() != text {
		t.Errorf("a second write differs (%v)", err)
	}
}

// A bad plan file is refused naming the line, whatever is wrong with it.
func TestPlanFileErrors(t *testing.T) {
	const head = `{"format":"benchserve-plan","version":1,"backend":"vllm","path":"/v1/completions","request_rate":"inf","requests":2}`
	line := func(seq int, rest string) string {
		return `{"seq":` + string(rune('0'+seq)) + `,"offset":0.5,"method":"POST","path":"/v1/completions","body":"{}"` + rest + "}"
	}
	for _, c := range []struct{ file, want string }{
		{"", "1: the file is empty"},
		{"not json\n", "1: not a plan header"},
		{`{"format":"other","version":1}` + "\n", `1: not a benchserve plan`},
		{`{"format":"benchserve-plan"}` + "\n", "1: the plan header has no version"},
		{`{"format":"benchserve-plan","version":2,"backend":"vllm"}` + "\n", "1: plan format version 2: this benchserve reads version 1 only"},
		{strings.Replace(head, `"inf"`, `-3`, 1) + "\n", "1: the plan header: request_rate: -3"},
		{head + "\n" + line(0, "") + "\n", "2: the file ends after 1 requests; its header says 2"},
		{head + "\n" + line(0, "") + "\n{oops\n", "3: not a request line"},
		{head + "\n" + line(0, "") + "\n\n", "3: an empty line"},
		{head + "\n" + line(1, "") + "\n", "2: seq must be 0"},
		{head + "\n" + line(0, "") + "\n" + strings.Replace(line(1, ""), "0.5", "0.25", 1) + "\n", "3: offset 0.250000000 s is before the previous request's 0.500000000 s"},
		{head + "\n" + line(0, "") + "\n" + strings.Replace(line(1, ""), "0.5", "-1", 1) + "\n", "3: not a request line (a JSON object): offset: -1"},
		{head + "\n" + strings.Replace(line(0, ""), "POST", "GET", 1) + "\n", `2: method "GET"`},
		{head + "\n" + strings.Replace(line(0, ""), `"/v1/completions"`, `"/x"`, 1) + "\n", `2: path "/x" is not the plan header's "/v1/completions"`},
		{head + "\n" + line(0, `,"body_base64":"e30="`) + "\n", "2: a request has exactly one of body and body_base64"},
		{head + "\n" + strings.Replace(line(0, ""), `"body":"{}"`, `"body_base64":"!!"`, 1) + "\n", "2: body_base64:"},
		{head + "\n" + line(0, "") + "\n" + line(1, "") + "\n" + line(2, "") + "\n", "4: more requests than the header's 2"},
		{head + "\n" + line(0, `,"audio_bytes":10`) + "\n", "2: audio_bytes and audio_seconds must be > 0 together"},
		{head + "\n" + line(0, `,"audio_bytes":10,"audio_seconds":-1`) + "\n", "2: audio_bytes and audio_seconds"},
	} {
		_, _, err := parsePlan(strings.NewReader(c.file))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to start %q", c.file, err, c.want)
		}
	}
}

func TestReplayScale(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		saved, rate, want float64
		err               bool
	}{
		{10, 10, 1, false},
		{inf, inf, 1, false},
		{10, inf, 0, false},
		{10, 20, 0.5, false},
		{10, 5, 2, false},
		{inf, 5, 0, true},
	} {
		got, err := replayScale(c.saved, c.rate)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("replayScale(%v, %v) = %v, %v; want %v (error %v)", c.saved, c.rate, got, err, c.want, c.err)
		}
	}
}
