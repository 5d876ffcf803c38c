package page

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"benchserve/internal/wire/jsonscan"
	"benchserve/record"
)

// Line is one result line: its numbers and strings by key, and a sweep's
// point or search keys when it has them.
type Line struct {
	File  string             `json:"file"`
	Num   map[string]float64 `json:"num"`
	Str   map[string]string  `json:"str"`
	Point map[string]float64 `json:"sweep_point,omitempty"`
	Phase string             `json:"phase,omitempty"`
	// SLOs are a search line's search_slo expressions.
	SLOs []string `json:"search_slo,omitempty"`
}

// Has reports whether the line has the number k.
func (l *Line) Has(k string) bool { _, ok := l.Num[k]; return ok }

// ReadLines reads every JSON line of a result file (json.dumps' NaN and
// Infinity included); a line that is not a JSON object is an error naming
// the file and line.
func ReadLines(path string) ([]Line, error) {
	var out []Line
	err := eachLine(path, func(n int, b []byte) error {
		l := Line{File: path, Num: map[string]float64{}, Str: map[string]string{}}
		var buf []byte
		_, err := jsonscan.ParseObject(b, func(key []byte, v jsonscan.Value) {
			k := string(jsonscan.AppendUnquoted(nil, key))
			switch v.Kind {
			case jsonscan.Number:
				l.Num[k], _ = v.Float()
			case jsonscan.String:
				buf = v.AppendString(buf[:0])
				l.Str[k] = string(buf)
			case jsonscan.True, jsonscan.False:
				l.Str[k] = string(v.Raw)
			case jsonscan.Object:
				if k == "sweep_point" {
					l.Point = map[string]float64{}
					it := v.Members()
					for mk, mv, ok := it.Next(); ok; mk, mv, ok = it.Next() {
						name := string(jsonscan.AppendUnquoted(nil, mk))
						if f, ok := mv.Float(); ok {
							l.Point[name] = f
						} else if mv.Kind == jsonscan.String && name == "phase" {
							l.Phase = string(mv.AppendString(nil))
						}
					}
				}
			case jsonscan.Array:
				if k == "search_slo" {
					it := v.Elements()
					for e, ok := it.Next(); ok; e, ok = it.Next() {
						l.SLOs = append(l.SLOs, string(e.AppendString(nil)))
					}
				}
			}
		})
		if err != nil {
			return fmt.Errorf("%s:%d: not a result line: %v", path, n, err)
		}
		out = append(out, l)
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no result lines", path)
	}
	return out, err
}

// ReadRecords reads a --record-file (a shard's header and end lines are
// not requests).
func ReadRecords(path string) ([]record.Record, error) {
	var out []record.Record
	err := eachLine(path, func(n int, b []byte) error {
		var r record.Record
		ok, err := record.DecodeLine(b, &r)
		if err != nil {
			return fmt.Errorf("%s:%d: not a record line: %v", path, n, err)
		}
		if ok {
			out = append(out, r)
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no records", path)
	}
	return out, err
}

func eachLine(path string, fn func(n int, b []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		b, err := r.ReadBytes('\n')
		if b = bytes.TrimSpace(b); len(b) > 0 {
			if ferr := fn(n, b); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
	}
}
