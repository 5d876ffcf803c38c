package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzGSPCache feeds damaged cache contents (past the magic and checksum,
// which would stop most of them) to the parser: it must refuse them or
// return rows, never panic, and rows it returns must read back the same
// once written again.
func FuzzGSPCache(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.gsp")
	rows := []Row{{Text: "s0\n\nq0", PromptLen: 3, TextPromptLen: 3, OutputLen: 2}, {Text: "s1\n\nq1 q2", PromptLen: 4, TextPromptLen: 4, OutputLen: 5}}
	if err := writeGSPCache(path, []string{"s0", "s1"}, rows, []int{0, 1}); err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	f.Add(data[len(gspMagic) : len(data)-4])
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{1, 1, 'x', 1, 5, 1, 1, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		rows, err := parseGSPRows(body)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.TextPromptLen != r.PromptLen || r.PromptLen < 0 || r.OutputLen < 0 {
				t.Fatalf("row %+v", r)
			}
		}
		if len(rows) == 0 {
			return
		}
		// The system prompts come back from the body itself.
		d := gspReader{b: body}
		sys := make([]string, d.count())
		for i := range sys {
			sys[i] = d.str()
		}
		d.count()
		group := make([]int, len(rows))
		for i := range rows {
			group[i] = d.num()
			d.num()
			d.num()
			d.str()
		}
		out := filepath.Join(t.TempDir(), "again.gsp")
		if err := writeGSPCache(out, sys, rows, group); err != nil {
			t.Fatal(err)
		}
		again, err := readGSPCache(out)
		if err != nil || !reflect.DeepEqual(again, rows) {
			t.Fatalf("rewritten rows differ (%v):\n%+v\n%+v", err, again, rows)
		}
	})
}
