package record

import (
	"os"
	"path/filepath"
	"testing"
)

// writeShard writes a shard's file as a shard does: header, n requests,
// and the end line when end is not nil; the file stays open (a running
// shard) when end is nil.
func writeShard(t *testing.T, w *Writer, shard string, n int, end *End) {
	t.Helper()
	w.WriteHeader(&Header{Shard: shard, PlannedSlots: 8, PlannedRequests: 8})
	for i := range n {
		w.Write(&Record{Seq: i, Sent: true, Success: true})
	}
	if end != nil {
		w.WriteEnd(end)
	}
}

// A shard killed mid-write leaves a last line cut short: Read leaves it
// out and says so; the same bytes earlier in the file are an error.
func TestReadTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	writeShard(t, w, "1/2", 3, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(path)
	torn := append(append([]byte{}, whole...), `{"seq": 3, "id": "x", "inten`...)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil || !f.Torn || len(f.Records) != 3 || f.Header == nil || f.End != nil {
		t.Fatalf("torn file: %v, torn %v, %d records", err, f != nil && f.Torn, len(f.Records))
	}
	if err := os.WriteFile(path, append(torn, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil {
		t.Errorf("a bad whole line read without an error")
	}
	// A whole last line without its newline is read.
	if err := os.WriteFile(path, whole[:len(whole)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := ReadFile(path); err != nil || f.Torn || len(f.Records) != 3 {
		t.Errorf("no final newline: %v, %+v", err, f)
	}
}

// A file a second run appended to reads as its last run: its header,
// records and end line, with the count of runs.
func TestReadKeepsTheLastRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	writeShard(t, w, "0/2", 4, &End{Records: 4})
	writeShard(t, w, "0/4", 2, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil || f.Runs != 2 || f.Header.Shard != "0/4" || f.End != nil || len(f.Records) != 2 {
		t.Errorf("%v: %d runs, header %+v, end %+v, %d records", err, f.Runs, f.Header, f.End, len(f.Records))
	}
}

// A follower sees the header as soon as the shard writes it (the writer
// sends it to the file at once), counts the records written since, and
// sees the end line; a later run's header starts it again.
func TestFollower(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	fl := &Follower{Path: path}
	if err := fl.Update(); !os.IsNotExist(err) {
		t.Fatalf("no file yet: %v", err)
	}
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteHeader(&Header{Shard: "2/4", PlannedRequests: 400})
	if err := fl.Update(); err != nil || fl.Header == nil || fl.Header.Shard != "2/4" || fl.Header.PlannedRequests != 400 || fl.Records != 0 || fl.End != nil {
		t.Fatalf("after the header: %v %+v", err, fl)
	}
	for i := range 5 {
		w.Write(&Record{Seq: i, Sent: true})
	}
	if err := w.Close(); err != nil { // flushed
		t.Fatal(err)
	}
	if err := fl.Update(); err != nil || fl.Records != 5 || fl.End != nil {
		t.Fatalf("after 5 records: %v %+v", err, fl)
	}
	// A line being written is read once it is whole.
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	end := (&End{Records: 5, Interrupted: true}).object().Bytes()
	if _, err := fh.Write(end[:10]); err != nil {
		t.Fatal(err)
	}
	if err := fl.Update(); err != nil || fl.End != nil {
		t.Fatalf("half an end line: %v %+v", err, fl)
	}
	if _, err := fh.Write(append(end[10:], '\n')); err != nil {
		t.Fatal(err)
	}
	if err := fl.Update(); err != nil || fl.End == nil || !fl.End.Interrupted || fl.Records != 5 {
		t.Fatalf("after the end line: %v %+v", err, fl)
	}
	if _, err := fh.Write(append((&Header{Shard: "2/4"}).object().Bytes(), '\n')); err != nil {
		t.Fatal(err)
	}
	if err := fl.Update(); err != nil || fl.End != nil || fl.Records != 0 {
		t.Fatalf("after a second run's header: %v %+v", err, fl)
	}
}
