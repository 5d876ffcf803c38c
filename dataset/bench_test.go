package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"benchserve/internal/py/pyrand"
	"benchserve/tokenizer"
)

// makeBigShareGPT is a ShareGPT-like file with realistic turn lengths:
// n conversations of 2 to 8 turns, 5 to 600 words each, some non-ASCII
// and escapes; about 3 KB per conversation.
func makeBigShareGPT(n int) []byte {
	g := &lcg{state: 7}
	var b bytes.Buffer
	b.WriteString("[\n")
	for k := range n {
		if k > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `  {"id": "big%d", "conversations": [`, k)
		turns := 2 + g.next(7)
		for t := range turns {
			if t > 0 {
				b.WriteString(", ")
			}
			role := "human"
			if t%2 == 1 {
				role = "gpt"
			}
			fmt.Fprintf(&b, `{"from": "%s", "value": "%s"}`, role, g.genWords(5+g.next(600)))
		}
		b.WriteString("]}")
	}
	b.WriteString("\n]\n")
	return b.Bytes()
}

var bigFile = struct {
	path string
	size int
}{}

func bigShareGPT(b *testing.B) string {
	if bigFile.path == "" {
		data := makeBigShareGPT(6000)
		bigFile.path = writeFile(b, "big.json", data)
		bigFile.size = len(data)
		b.Cleanup(func() { bigFile.path = "" })
	}
	return bigFile.path
}

func benchLoad(b *testing.B, p Params) {
	for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			setWorkers(b, w)
			b.ReportAllocs()
			for b.Loop() {
				env := Env{Tok: wordTok{}, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42), Out: io.Discard}
				rows, err := Load(context.Background(), p, env)
				if err != nil || len(rows) != p.NumPrompts {
					b.Fatalf("%d rows, %v", len(rows), err)
				}
			}
		})
	}
}

// BenchmarkRandom is 2,000 prompts of 1,024 tokens from a 19 MB file,
// indexing included.
func BenchmarkRandom(b *testing.B) {
	path := bigShareGPT(b)
	benchLoad(b, Params{Name: "random", Path: path, NumPrompts: 2000, RandomInputLen: 1024, RandomOutputLen: 1024, RandomRangeRatio: 1})
}

func BenchmarkRandomIDs(b *testing.B) {
	benchLoad(b, Params{Name: "random-ids", NumPrompts: 2000, RandomInputLen: 1024, RandomOutputLen: 1024, RandomRangeRatio: 1})
}

func BenchmarkShareGPT(b *testing.B) {
	path := bigShareGPT(b)
	benchLoad(b, Params{Name: "sharegpt", Path: path, NumPrompts: 2000})
}

// BenchmarkIndex is the validating pass alone, in bytes per second.
func BenchmarkIndex(b *testing.B) {
	path := bigShareGPT(b)
	b.SetBytes(int64(bigFile.size))
	for b.Loop() {
		c, err := openCorpus(context.Background(), path, "big")
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkIndexNonASCII is the same pass over text that is mostly
// multi-byte characters, as in the Chinese part of ShareGPT.
func BenchmarkIndexNonASCII(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("[")
	for k := range 3000 {
		if k > 0 {
			buf.WriteString(",")
		}
		fmt.Fprintf(&buf, `{"conversations": [{"from": "human", "value": "%s"}, {"from": "gpt", "value": "%s"}]}`,
			strings.Repeat("你好，世界。", 100), strings.Repeat("Grüße — 😀 ", 100))
	}
	buf.WriteString("]")
	path := writeFile(b, "cjk.json", buf.Bytes())
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		c, err := openCorpus(context.Background(), path, "cjk")
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkShareGPTo200k tokenizes with the built-in o200k_base encoding,
// where tokenizing ahead in parallel matters most.
func BenchmarkShareGPTo200k(b *testing.B) {
	tok, err := tokenizer.Load("o200k_base")
	if err != nil {
		b.Skip(err)
	}
	path := bigShareGPT(b)
	p := Params{Name: "sharegpt", Path: path, NumPrompts: 2000}
	for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			setWorkers(b, w)
			for b.Loop() {
				env := Env{Tok: tok, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42), Out: io.Discard}
				if _, err := Load(context.Background(), p, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
