package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"benchserve/internal/py/pyrand"
)

// lbExamples are n examples whose contexts grow with i: example i has a
// context of 2i words.
func lbExamples(n int) []map[string]string {
	var out []map[string]string
	for i := range n {
		out = append(out, map[string]string{
			"_id": fmt.Sprint(i), "domain": "d", "context": strings.TrimSpace(strings.Repeat(fmt.Sprintf("w%d ", i), 2*i)),
			"question": fmt.Sprintf("w%d", 50+i), "choice_A": "w1", "choice_B": "w2", "choice_C": "w3", "choice_D": "w4", "answer": "A",
		})
	}
	return out
}

func lbPrompt(ex map[string]string) string {
	return ex["context"] + "\n\nQuestion: " + ex["question"] + "\nA. " + ex["choice_A"] + "\nB. " + ex["choice_B"] +
		"\nC. " + ex["choice_C"] + "\nD. " + ex["choice_D"] + "\nAnswer:"
}

// lbWant walks the examples as the reference does.
func lbWant(exs []map[string]string, seed int64, n, outLen int, contextLen *int) []Row {
	order := make([]int, len(exs))
	for i := range order {
		order[i] = i
	}
	pyrand.NewPython(seed).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var rows []Row
	for _, k := range order {
		if len(rows) >= n {
			break
		}
		text := lbPrompt(exs[k])
		plen := len(wordTok{}.Encode(text, true))
		if contextLen != nil && *contextLen != 0 && plen+outLen > *contextLen {
			continue
		}
		rows = append(rows, Row{Text: text, PromptLen: plen, TextPromptLen: plen, OutputLen: outLen})
	}
	return rows
}

func TestLongBench(t *testing.T) {
	exs := lbExamples(12)
	var jsonl bytes.Buffer
	for i, ex := range exs {
		b, _ := json.Marshal(ex)
		jsonl.Write(b)
		jsonl.WriteString("\n")
		if i == 3 {
			jsonl.WriteString("   \n") // blank lines are skipped
		}
	}
	list, _ := json.MarshalIndent(exs, "", "  ")
	pq := filepath.Join(t.TempDir(), "lb.parquet")
	var prow []lbRow
	for _, ex := range exs {
		s := func(k string) *string { v := ex[k]; return &v }
		prow = append(prow, lbRow{s("context"), s("question"), s("choice_A"), s("choice_B"), s("choice_C"), s("choice_D")})
	}
	if err := parquet.WriteFile(pq, prow); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"jsonl":   writeFile(t, "lb.jsonl", jsonl.Bytes()),
		"list":    writeFile(t, "data.json", list),
		"parquet": pq,
	}
	for _, w := range []int{1, 3} {
		setWorkers(t, w)
		for kind, path := range files {
			for _, c := range []struct {
				n          int
				out        *int
				contextLen *int
			}{{5, nil, nil}, {20, intp(7), nil}, {20, nil, intp(30)}, {4, nil, intp(0)}} {
				var out bytes.Buffer
				p := Params{Name: "longbench_v2", Path: path, NumPrompts: c.n, SharegptOutputLen: c.out, SharegptContextLen: c.contextLen}
				rows, err := Load(context.Background(), p, testEnv(8, &out))
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				outLen := 10
				if c.out != nil {
					outLen = *c.out
				}
				want := lbWant(exs, 8, c.n, outLen, c.contextLen)
				if !reflect.DeepEqual(rows, want) {
					t.Errorf("%s %+v: rows\n%+v\nwant\n%+v", kind, c, rows, want)
				}
				if len(want) < c.n != strings.Contains(out.String(), "gave only") {
					t.Errorf("%s %+v: printed %q", kind, c, out.String())
				}
			}
		}
	}

	// No --dataset-path: the Hub's file.
	var got []string
	env := testEnv(8, new(bytes.Buffer))
	env.Fetch = func(_ context.Context, repoType, repo, file string) (string, error) {
		got = []string{repoType, repo, file}
		return files["list"], nil
	}
	rows, err := Load(context.Background(), Params{Name: "longbench_v2", NumPrompts: 3}, env)
	if err != nil || !reflect.DeepEqual(rows, lbWant(exs, 8, 3, 10, nil)) {
		t.Errorf("download: %v, %+v", err, rows)
	}
	if want := []string{"dataset", "THUDM/LongBench-v2", "data.json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("fetched %v, want %v", got, want)
	}
}

func TestLongBenchErrors(t *testing.T) {
	good := `{"context": "w1", "question": "w2", "choice_A": "a", "choice_B": "b", "choice_C": "c", "choice_D": "d"}`
	for _, c := range []struct {
		name, data, want string
	}{
		{"l.jsonl", good + "\n\n" + `{"context": "w1"` + "\n", ": line 3: invalid JSON at column"},
		{"l.jsonl", good + "\n" + `{"context": "w1", "question": "w2"}` + "\n", ": line 2: choice_A: missing"},
		{"l.jsonl", good + "\n" + strings.Replace(good, `"a"`, "7", 1) + "\n", ": line 2: choice_A: want a string, got a number"},
		{"l.json", "[" + good + ", 3]", ": entry 2: not a JSON object but a number"},
		{"l.json", "[" + good + ", " + strings.Replace(good, `"w2"`, "null", 1) + "]", ": entry 2: question: want a string, got null"},
		{"l.parquet", "PAR1 not really", ": not a readable parquet file"},
	} {
		path := writeFile(t, c.name, []byte(c.data))
		_, err := Load(context.Background(), Params{Name: "longbench_v2", Path: path, NumPrompts: 5}, testEnv(1, new(bytes.Buffer)))
		if err == nil || !strings.Contains(err.Error(), "--dataset-path "+path+c.want) {
			t.Errorf("%s: err %v, want %q", c.data, err, c.want)
		}
	}
	pq := filepath.Join(t.TempDir(), "x.parquet")
	type other struct {
		Context string `parquet:"context"`
	}
	if err := parquet.WriteFile(pq, []other{{"w1"}}); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), Params{Name: "longbench_v2", Path: pq, NumPrompts: 5}, testEnv(1, new(bytes.Buffer)))
	if err == nil || !strings.Contains(err.Error(), pq+": no question column") {
		t.Errorf("parquet without columns: %v", err)
	}
	_, err = Load(context.Background(), Params{Name: "longbench_v2", NumPrompts: 5}, testEnv(1, new(bytes.Buffer)))
	if err == nil || !strings.Contains(err.Error(), "--dataset-path is empty and downloading is not available; pass --dataset-path with a local copy of data.json from THUDM/LongBench-v2") {
		t.Errorf("no download: %v", err)
	}
}
