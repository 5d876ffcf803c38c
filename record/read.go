package record

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"benchserve/internal/jsonscan"
)

// File is a record file read back: its requests' records and, for a
// shard's file, its header and end line.
type File struct {
	Records []Record
	Header  *Header // nil: no header (not a shard's file)
	End     *End    // nil: no end line (the shard has not finished)
	// Runs counts a shard file's headers: a file appended to by a later
	// run holds more than one, and Records and End are the last run's.
	Runs int
	// Torn: the file ended in a line cut short (its writer was killed
	// mid-write), which was left out.
	Torn bool
}

// ReadFile reads the record file at path (Writer writes them).
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads a record file from r; name prefixes its errors (name:line).
func Read(r io.Reader, name string) (*File, error) {
	file := &File{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	unended := false // the line scanned last had no newline: the file's end
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		unended = atEOF && tok != nil && adv == len(data) && data[len(data)-1] != '\n'
		return adv, tok, err
	})
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec Record
		isRec, err := DecodeLine(line, &rec)
		if err != nil && unended {
			file.Torn = true
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not a record line: %v", name, n, err)
		}
		if isRec {
			file.Records = append(file.Records, rec)
			continue
		}
		var h Header
		var e End
		isHeader, isEnd, err := decodeShardLine(line, &h, &e)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		case isEnd:
			file.End = &e
		case isHeader:
			// A later run appended to the file: its records start here.
			file.Header, file.End, file.Records = &h, nil, nil
			file.Runs++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return file, nil
}

// DecodeLine reads one line of a record file (Writer writes them) into
// r. It reports false for a line that is not a request's: a shard's
// header or end line, which have no "seq". The record is Sent; its text
// is not in the file, only its token count (text_tokens).
func DecodeLine(line []byte, r *Record) (bool, error) {
	isRec := false
	_, err := jsonscan.ParseObject(line, func(k []byte, v jsonscan.Value) {
		f := func() float64 { x, _ := v.Float(); return x }
		i := func() int { x, _ := v.Int(); return int(x) }
		switch {
		case jsonscan.KeyIs(k, "seq"):
			isRec, r.Seq = true, i()
		case jsonscan.KeyIs(k, "id"):
			r.ID = string(v.AppendString(nil))
		case jsonscan.KeyIs(k, "server_id"):
			r.ServerID = string(v.AppendString(nil))
		case jsonscan.KeyIs(k, "intended"):
			r.Intended = f()
		case jsonscan.KeyIs(k, "start"):
			r.Start = f()
		case jsonscan.KeyIs(k, "success"):
			r.Success = v.Kind == jsonscan.True
		case jsonscan.KeyIs(k, "latency"):
			r.Latency = f()
		case jsonscan.KeyIs(k, "ttft"):
			r.TTFT = f()
		case jsonscan.KeyIs(k, "ttfo"):
			r.TTFO = f()
		case jsonscan.KeyIs(k, "itl"):
			it := v.Elements()
			for e, ok := it.Next(); ok; e, ok = it.Next() {
				x, _ := e.Float()
				r.Gaps.Append(time.Duration(math.Round(x * 1e9)))
			}
		case jsonscan.KeyIs(k, "prompt_len"):
			r.PromptLen = i()
		case jsonscan.KeyIs(k, "output_len"):
			r.OutputLen = i()
		case jsonscan.KeyIs(k, "reasoning_tokens"):
			r.ReasoningTokens = i()
		case jsonscan.KeyIs(k, "input_len"):
			r.InputLen = i()
			r.InputTextLen = r.InputLen
		case jsonscan.KeyIs(k, "benchmark_start_unix"):
			r.RunStart = f()
		case jsonscan.KeyIs(k, "audio_bytes"):
			r.AudioBytes = i()
		case jsonscan.KeyIs(k, "audio_seconds"):
			r.AudioSeconds = f()
		case jsonscan.KeyIs(k, "text_tokens"):
			r.TextTokens, r.TextCounted = i(), true
		case jsonscan.KeyIs(k, "error"):
			r.Error = string(v.AppendString(nil))
		case jsonscan.KeyIs(k, "error_kind"):
			r.ErrorKind = string(v.AppendString(nil))
		case jsonscan.KeyIs(k, "stream_integrity"):
			r.Stream = ParseIntegrity(string(v.AppendString(nil)))
		case jsonscan.KeyIs(k, "cancel_at"):
			r.CancelAt = f()
		case jsonscan.KeyIs(k, "cancel_late"):
			r.CancelLate = f()
		case jsonscan.KeyIs(k, "url"):
			r.URL = i()
		case jsonscan.KeyIs(k, "session"):
			r.Round, r.Session = true, i()
		case jsonscan.KeyIs(k, "turn"):
			r.Round, r.Turn = true, i()
		case jsonscan.KeyIs(k, "planned_delay"):
			r.PlannedDelay = f()
		case jsonscan.KeyIs(k, "session_turns"):
			r.Round, r.SessionTurns = true, i()
		}
	})
	r.Sent = isRec
	return isRec && err == nil, err
}
