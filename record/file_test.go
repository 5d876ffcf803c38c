package record

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A record written to a record file reads back (DecodeLine, which merge
// and report use) with every field the file carries; a shard's own lines
// read as no request.
func TestRecordFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Record{Seq: 7, ID: "a\"b", ServerID: "s-1", Intended: 0.5, Start: 0.625, Sent: true, Success: true,
		Latency: 1.25, TTFT: 0.125, TTFO: 0.25, Gaps: GapsOf(3*time.Millisecond, 250*time.Microsecond),
		PromptLen: 11, InputLen: 10, InputTextLen: 10, OutputLen: 3, ReasoningTokens: 1, TextTokens: 3, TextCounted: true}
	w.Write(&want)
	failed := Record{Seq: 8, Sent: true, Error: "500 Internal Server Error: x", ErrorKind: KindHTTP5xx}
	w.Write(&failed)
	cancelled := Record{Seq: 9, Sent: true, Error: "cancelled", ErrorKind: KindCancelled, CancelAt: 1.75, CancelLate: 0.001}
	w.Write(&cancelled)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Records
	if len(got) != 3 || got[2].CancelAt != 1.75 || got[2].CancelLate != 0.001 || !got[2].Cancelled() || got[1].Cancelled() || !reflect.DeepEqual(got[0], want) || got[1].Error != failed.Error || got[1].ErrorKind != failed.ErrorKind || got[1].Success {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	if f.Header != nil || f.End != nil {
		t.Errorf("a file of requests read with a header %+v or an end %+v", f.Header, f.End)
	}
	var r Record
	if ok, err := DecodeLine([]byte(`{"shard": "0/2", "seed": 1}`), &r); ok || err != nil {
		t.Errorf("a shard header read as a request: %v %v", ok, err)
	}
}

// Any records, header and end line written read back equal, whatever
// their values (seeded random ones, with the strings JSON escapes and
// the floats Python writes as Infinity); the run's start is in each line.
func TestRecordFileProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		const chars = "ab\"\\\n\t é€😀\x01/"
		rs := []rune(chars)
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteRune(rs[rng.IntN(len(rs))])
		}
		return b.String()
	}
	num := func() float64 {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1:
			return math.Inf(1)
		default:
			return rng.Float64() * math.Pow(10, float64(rng.IntN(12)-4))
		}
	}
	intp := func() *int {
		if rng.IntN(2) == 0 {
			return nil
		}
		n := rng.IntN(5000)
		return &n
	}
	for trial := range 200 {
		h := &Header{Shard: str() + "/2", StartAt: num(), Seed: rng.IntN(1 << 30), PlannedSlots: rng.IntN(1e6), PlannedRequests: rng.IntN(1e6),
			Backend: str(), DatasetName: str(), RequestRate: num(), MaxConcurrency: intp(), SharegptOutputLen: intp(),
			RandomInputLen: rng.IntN(1e5), RandomOutputLen: rng.IntN(1e5), RandomRangeRatio: rng.Float64()}
		if rng.IntN(2) == 0 {
			tag := str()
			h.Tag = &tag
		}
		path := filepath.Join(t.TempDir(), "r.jsonl")
		w, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w.WriteHeader(h)
		start := time.Unix(1_800_000_000, int64(rng.IntN(1e9)))
		w.StartRun(start)
		var recs []Record
		for i := range rng.IntN(20) {
			r := Record{Seq: i, ID: str(), ServerID: str(), Intended: num(), Start: num(), Sent: true, Success: rng.IntN(2) == 0,
				Latency: num(), TTFT: num(), TTFO: num(), PromptLen: rng.IntN(1e5), InputLen: rng.IntN(1e5),
				OutputLen: rng.IntN(1e5), ReasoningTokens: rng.IntN(100), Error: str(), ErrorKind: str()}
			r.InputTextLen = r.InputLen
			for range rng.IntN(5) {
				r.Gaps.Append(time.Duration(rng.IntN(1e9)))
			}
			if rng.IntN(2) == 0 {
				r.TextTokens, r.TextCounted = rng.IntN(1e5), true
			}
			if rng.IntN(2) == 0 {
				r.Round, r.Session, r.Turn, r.PlannedDelay = true, rng.IntN(1e6), rng.IntN(100), num()
			}
			if rng.IntN(2) == 0 {
				r.Stream = StreamRead | Integrity(rng.IntN(32))<<1
			}
			w.Write(&r)
			r.RunStart = float64(start.UnixNano()) / 1e9
			recs = append(recs, r)
		}
		end := &End{Start: num(), Duration: num(), Records: len(recs), Interrupted: rng.IntN(2) == 0, Late: num()}
		w.WriteEnd(end)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := ReadFile(path)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !reflect.DeepEqual(f.Header, h) || !reflect.DeepEqual(f.End, end) || !reflect.DeepEqual(f.Records, recs) {
			b, _ := os.ReadFile(path)
			t.Fatalf("trial %d: read back\n%+v\n%+v\n%+v\nwant\n%+v\n%+v\n%+v\nfile:\n%s", trial, f.Header, f.End, f.Records, h, end, recs, b)
		}
	}
}

// A bad line is named with the file and its line number.
func TestReadNamesTheLine(t *testing.T) {
	_, err := Read(bytes.NewReader([]byte("{\"seq\": 1}\n\n{\"seq\": 2, oops}\n")), "r.jsonl")
	if err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:3: not a record line") {
		t.Errorf("error %v, want it at r.jsonl:3", err)
	}
}
