package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// LongBench v2's place on the Hugging Face Hub: one JSON list of 503
// examples, which datasets.load_dataset reads as its train split.
const (
	LongBenchRepo = "THUDM/LongBench-v2"
	LongBenchFile = "data.json"
)

// lbFields are the example's fields the prompt uses, in prompt order.
var lbFields = [...]string{"context", "question", "choice_A", "choice_B", "choice_C", "choice_D"}

// lbExample is one example's fields, in lbFields order.
type lbExample [len(lbFields)]string

// prompt is _format_prompt.
func (e *lbExample) prompt() string {
	return e[0] + "\n\nQuestion: " + e[1] + "\nA. " + e[2] + "\nB. " + e[3] + "\nC. " + e[4] + "\nD. " + e[5] + "\nAnswer:"
}

// lbSpan is where an example is in its file, and its line (JSONL) or
// entry (JSON list) number for errors.
type lbSpan struct {
	off, n int64
	at     int
}

// lbSource is the examples of a file, read back one at a time as the walk
// needs them (the real file is ~470 MB, most of it contexts).
type lbSource struct {
	label string
	n     int
	// get returns example i (in file order).
	get   func(i int) (lbExample, error)
	close func()
}

// loadLongBench is sample_longbench_v2_requests: the examples shuffled,
// each a prompt of its context, question and choices, kept in order unless
// its tokens plus the output length exceed --sharegpt-context-len, until
// --num-prompts rows are built. output_len is --sharegpt-output-len, or 10.
func loadLongBench(ctx context.Context, p Params, env Env) ([]Row, error) {
	outLen := 10
	if p.SharegptOutputLen != nil {
		outLen = *p.SharegptOutputLen
	}
	src, err := openLongBench(ctx, p, env)
	if err != nil {
		return nil, err
	}
	defer src.close()
	order := make([]int, src.n)
	for i := range order {
		order[i] = i
	}
	env.Py.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })

	type built struct {
		row Row
		err error
	}
	special := env.Tok.NumSpecialTokensToAdd()
	build := func(k int) built {
		ex, err := src.get(order[k])
		if err != nil {
			return built{err: err}
		}
		text := ex.prompt()
		n := env.Tok.Count(text) + special
		return built{row: Row{Text: text, PromptLen: n, TextPromptLen: n, OutputLen: outLen}}
	}
	var rows []Row
	var walkErr error
	if p.NumPrompts > 0 {
		err = ahead(ctx, len(order), workers, build, func(_ int, b built) bool {
			if b.err != nil {
				walkErr = b.err
				return false
			}
			// Unlike the reference, where 0 drops every row, 0 means no
			// limit, as for sharegpt.
			if cl := p.SharegptContextLen; cl != nil && *cl != 0 && b.row.PromptLen+outLen > *cl {
				return true
			}
			rows = append(rows, b.row)
			return len(rows) < p.NumPrompts
		})
	}
	if err == nil {
		err = walkErr
	}
	if err != nil {
		return nil, err
	}
	shortfall(env.Out, src.label, len(rows), p.NumPrompts)
	return rows, nil
}

// openLongBench opens --dataset-path (parquet when its name ends in
// .parquet; a JSON list when it starts with '['; else JSONL), or the Hub's
// file.
func openLongBench(ctx context.Context, p Params, env Env) (*lbSource, error) {
	path, label := p.Path, "--dataset-path "+p.Path
	if path == "" {
		if env.Fetch == nil {
			return nil, fmt.Errorf("--dataset-path is empty and downloading is not available; pass --dataset-path with a local copy of %s from %s, or a parquet or JSONL file", LongBenchFile, LongBenchRepo)
		}
		var err error
		if path, err = env.Fetch(ctx, "dataset", LongBenchRepo, LongBenchFile); err != nil {
			return nil, fmt.Errorf("downloading %s from %s (or pass --dataset-path with a local parquet or JSONL file): %v", LongBenchFile, LongBenchRepo, err)
		}
		label = "downloaded LongBench v2 file " + path
	}
	if strings.HasSuffix(path, ".parquet") {
		return lbParquet(path, label)
	}
	f, err := openDatasetFile(path, label, "a JSONL file")
	if err != nil {
		return nil, err
	}
	var spans []lbSpan
	var what string
	if lbIsList(f) {
		what = "entry"
		spans, err = lbListSpans(ctx, f, label)
	} else {
		what = "line"
		spans, err = lbLineSpans(ctx, path, label)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &lbSource{label: label, n: len(spans), close: func() { f.Close() }, get: func(i int) (lbExample, error) {
		raw := make([]byte, spans[i].n)
		if _, err := f.ReadAt(raw, spans[i].off); err != nil {
			return lbExample{}, fmt.Errorf("%s: reading back %s %d: %v", label, what, i+1, err)
		}
		ex, err := lbDecode(raw)
		if err != nil {
			return lbExample{}, fmt.Errorf("%s: %s %d: %v", label, what, spans[i].at, err)
		}
		return ex, nil
	}}, nil
}

// lbIsList reports whether the file's first non-space byte is '['.
func lbIsList(f *os.File) bool {
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	b := bytes.TrimLeft(buf[:n], " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// lbLineSpans indexes a JSONL file, checking that each non-blank line is a
// JSON object as json.loads would.
func lbLineSpans(ctx context.Context, path, label string) ([]lbSpan, error) {
	var spans []lbSpan
	err := jsonlLinesAt(ctx, path, label, func(n int, off int64, line []byte) (bool, error) {
		if blankLine(line) {
			return true, nil
		}
		if err := checkObjectLine(line); err != nil {
			return false, fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		spans = append(spans, lbSpan{off: off, n: int64(len(line)), at: n})
		return true, nil
	})
	return spans, err
}

// lbListSpans indexes a JSON list of objects.
func lbListSpans(ctx context.Context, f *os.File, label string) ([]lbSpan, error) {
	r := io.NewSectionReader(f, 0, 1<<62)
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %v", label, err)
	}
	var spans []lbSpan
	for i := 0; dec.More(); i++ {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s: entry %d: invalid JSON: %v", label, i+1, err)
		}
		if raw[0] != '{' {
			return nil, fmt.Errorf("%s: entry %d: not a JSON object but %s", label, i+1, pyTypeName(raw))
		}
		end := dec.InputOffset()
		spans = append(spans, lbSpan{off: end - int64(len(raw)), n: int64(len(raw)), at: i + 1})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON after entry %d: %v", label, len(spans), err)
	}
	return spans, nil
}

// lbDecode reads an example's fields from a JSON object; each must be a
// string.
func lbDecode(raw []byte) (lbExample, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return lbExample{}, fmt.Errorf("invalid JSON: %v", err)
	}
	var ex lbExample
	for k, name := range lbFields {
		v, ok := obj[name]
		if !ok {
			return ex, fmt.Errorf("%s: missing", name)
		}
		if err := json.Unmarshal(v, &ex[k]); err != nil || v[0] != '"' {
			return ex, fmt.Errorf("%s: want a string, got %s", name, pyTypeName(v))
		}
	}
	return ex, nil
}

// lbRow is the parquet columns the dataset reads.
type lbRow struct {
	Context  *string `parquet:"context,optional"`
	Question *string `parquet:"question,optional"`
	ChoiceA  *string `parquet:"choice_A,optional"`
	ChoiceB  *string `parquet:"choice_B,optional"`
	ChoiceC  *string `parquet:"choice_C,optional"`
	ChoiceD  *string `parquet:"choice_D,optional"`
}

// lbParquet reads a parquet file's examples into memory.
func lbParquet(path, label string) (src *lbSource, err error) {
	f, err := openDatasetFile(path, label, "a JSONL file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable parquet file: %v", label, err)
	}
	for _, name := range lbFields {
		if err := lbCheckColumn(pf.Schema(), name); err != nil {
			return nil, fmt.Errorf("%s: %v", label, err)
		}
	}
	// The library panics on some malformed files; make that an error.
	defer func() {
		if p := recover(); p != nil {
			src, err = nil, fmt.Errorf("%s: malformed parquet file: %v", label, p)
		}
	}()
	r := parquet.NewGenericReader[lbRow](pf)
	defer r.Close()
	var exs []lbExample
	buf := make([]lbRow, 16)
	for {
		k, rerr := r.Read(buf)
		for _, row := range buf[:k] {
			ex, err := lbFromParquet(row)
			if err != nil {
				return nil, fmt.Errorf("%s: row %d: %v", label, len(exs)+1, err)
			}
			exs = append(exs, ex)
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return nil, fmt.Errorf("%s: row %d: %v", label, len(exs)+1, rerr)
		}
	}
	return &lbSource{label: label, n: len(exs), close: func() {}, get: func(i int) (lbExample, error) { return exs[i], nil }}, nil
}

func lbFromParquet(r lbRow) (lbExample, error) {
	var ex lbExample
	for k, v := range []*string{r.Context, r.Question, r.ChoiceA, r.ChoiceB, r.ChoiceC, r.ChoiceD} {
		if v == nil {
			return ex, fmt.Errorf("%s: null", lbFields[k])
		}
		ex[k] = *v
	}
	return ex, nil
}

// lbCheckColumn checks that the schema has a string column name.
func lbCheckColumn(s *parquet.Schema, name string) error {
	for _, f := range s.Fields() {
		if f.Name() != name {
			continue
		}
		if !f.Leaf() || f.Type().Kind() != parquet.ByteArray {
			return fmt.Errorf("column %s: want strings, got %s", name, f.Type())
		}
		return nil
	}
	return fmt.Errorf("no %s column", name)
}
