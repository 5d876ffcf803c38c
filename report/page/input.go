package page

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"benchserve/internal/jsonscan"
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

// ReadRecords reads a --record-file of one run (a shard's header and end
// lines are not requests); a file that holds several runs is an error
// naming them.
func ReadRecords(path string) ([]record.Record, error) {
	runs, err := ReadRecordRuns(path)
	if err != nil {
		return nil, err
	}
	if len(runs) > 1 {
		return nil, fmt.Errorf("%s holds %d runs (a sweep's record file, or one reused by several runs); give a file of one run", path, len(runs))
	}
	return runs[0].Recs, nil
}

// ReadRecordRuns reads a --record-file into its runs: every record line
// carries its run's benchmark_start_unix, and the runs that appended to
// one file follow each other (lines without it, from before it was
// written, are one run). Each set is named by the path, and when the file
// holds several by the run's number (Label adds its settings).
func ReadRecordRuns(path string) ([]RecordSet, error) {
	var runs []RecordSet
	err := eachLine(path, func(n int, b []byte) error {
		var r record.Record
		ok, err := record.DecodeLine(b, &r)
		if err != nil {
			return fmt.Errorf("%s:%d: not a record line: %v", path, n, err)
		}
		if !ok {
			return nil
		}
		if len(runs) == 0 || runs[len(runs)-1].Start != r.RunStart {
			runs = append(runs, RecordSet{Name: path, Start: r.RunStart})
		}
		runs[len(runs)-1].Recs = append(runs[len(runs)-1].Recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no records", path)
	}
	if len(runs) > 1 {
		for i := range runs {
			runs[i].Run = fmt.Sprintf("run %d of %d", i+1, len(runs))
		}
	}
	return runs, nil
}

// Label adds to each run of a file of several the settings of its result
// line (the line with the same benchmark_start_unix), when lines has it.
func Label(runs []RecordSet, lines []Line) {
	for i := range runs {
		rs := &runs[i]
		if rs.Run == "" || rs.Start == 0 {
			continue
		}
		for _, l := range lines {
			if t, ok := l.Num["benchmark_start_unix"]; !ok || math.Abs(t-rs.Start) > 1e-6 {
				continue
			}
			var parts []string
			if rate := rateOf(&l); rate != "" {
				parts = append(parts, "request rate "+rate)
			}
			if c, ok := l.Num["max_concurrency"]; ok {
				parts = append(parts, "max concurrency "+num(c))
			}
			if tag := l.Str["tag"]; tag != "" {
				parts = append(parts, "tag "+tag)
			}
			if len(parts) > 0 {
				rs.Run += " (" + strings.Join(parts, ", ") + ")"
			}
			break
		}
	}
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
