package bench

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"benchserve/record"
)

// A record written to a --record-file reads back (record.DecodeLine, which
// merge and report use) with every field the file carries; a shard's own
// lines read as no request.
func TestRecordFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	rf, err := openRecordFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := record.Record{Seq: 7, ID: "a\"b", ServerID: "s-1", Intended: 0.5, Start: 0.625, Sent: true, Success: true,
		Latency: 1.25, TTFT: 0.125, TTFO: 0.25, Gaps: record.GapsOf(3*time.Millisecond, 250*time.Microsecond),
		PromptLen: 11, InputLen: 10, InputTextLen: 10, OutputLen: 3, ReasoningTokens: 1, TextTokens: 3, TextCounted: true}
	rf.write(&want)
	failed := record.Record{Seq: 8, Sent: true, Error: "500 Internal Server Error: x", ErrorKind: record.KindHTTP5xx}
	rf.write(&failed)
	if err := rf.close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	sc := bufio.NewScanner(f)
	var got []record.Record
	for sc.Scan() {
		var r record.Record
		if ok, err := record.DecodeLine(sc.Bytes(), &r); !ok || err != nil {
			t.Fatalf("%s: %v %v", sc.Text(), ok, err)
		}
		got = append(got, r)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0], want) || got[1].Error != failed.Error || got[1].ErrorKind != failed.ErrorKind || got[1].Success {
		t.Errorf("read back\n%+v\n%+v\nwant\n%+v", got[0], got[1], want)
	}
	var r record.Record
	if ok, err := record.DecodeLine([]byte(`{"shard": "0/2", "seed": 1}`), &r); ok || err != nil {
		t.Errorf("a shard header read as a request: %v %v", ok, err)
	}
}
