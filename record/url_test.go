package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run of several --base-url ends each line with its "url" index, which
// reads back; a run of one writes none.
func TestRecordFileURL(t *testing.T) {
	for _, several := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "r.jsonl")
		w, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if several {
			w.IndexURLs()
		}
		for i := range 3 {
			w.Write(&Record{Seq: i, Sent: true, Success: true, URL: i % 2})
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		f, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range lines {
			has := strings.HasSuffix(l, `, "url": `+string(rune('0'+i%2))+"}")
			if has != several || strings.Contains(l, `"url"`) != several {
				t.Errorf("several=%v: line %d is %s", several, i, l)
			}
			if want := i % 2; several && f.Records[i].URL != want {
				t.Errorf("line %d reads back url %d, want %d", i, f.Records[i].URL, want)
			}
		}
	}
}

// A shard's header names the run's URLs when it has several.
func TestHeaderURLs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteHeader(&Header{Shard: "0/2", URLs: []string{"http://a:1", "http://u:xxxxx@b:2"}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Header == nil || len(f.Header.URLs) != 2 || f.Header.URLs[1] != "http://u:xxxxx@b:2" {
		t.Errorf("header read back: %+v", f.Header)
	}
}
