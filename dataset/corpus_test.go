package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func index(data []byte) (*corpus, error) {
	return indexCorpus(context.Background(), bytes.NewReader(data), "f.json")
}

// texts reads back every kept pair.
func texts(t testing.TB, c *corpus) [][2]string {
	var out [][2]string
	for _, p := range c.pairs {
		a, err := c.text(p.prompt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.text(p.completion)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{a, b})
	}
	return out
}

func TestCorpusKeeps(t *testing.T) {
	data := `[
 {"conversations": [{"from": "human", "value": "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}, {"value": "x"}, {"value": 5}]},
 {"conversations": [{"value": "one turn"}]},
 {"conversation": [{"value": "p2"}, {"value": "c2"}]},
 {"conversations": [{"value": "hidden"}], "conversation": [{"value": "p3"}, {"value": "c3"}]},
 {"conversations": [], "conversations": [{"value": "v1", "value": "p4"}, {"value": "c4"}]},
 {"conversation\u0073": [{"valu\u0065": "p5"}, {"value": "c5"}]},
 {"Conversations": [{"value": "case matters"}, {"value": "x"}]},
 {"id": NaN, "n": -Infinity, "m": Infinity, "k": [1e5, -0.5E-3, 0, true, false, null, {"a": [[]]}]},
 {}
]`
	c, err := index([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{
		{"a\"b\\c/d\b\f\n\r\té😀", "x"},
		{"p2", "c2"},
		{"p4", "c4"},
		{"p5", "c5"},
	}
	if got := texts(t, c); !reflect.DeepEqual(got, want) {
		t.Errorf("pairs = %q, want %q", got, want)
	}
}

func TestCorpusErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"", "f.json: invalid JSON at line 1 column 1: unexpected end of file, expecting a value"},
		{"  \n", "f.json: invalid JSON at line 2 column 1: unexpected end of file, expecting a value"},
		{"hello", "f.json: invalid JSON at line 1 column 1: unexpected 'h', expecting a value"},
		{"\ufeff[]", "f.json: invalid JSON at line 1 column 1: unexpected byte 0xef, expecting a value"},
		{`[{"conversations": [{"value": "a"}, {"value": "b"}]}`, "f.json: invalid JSON at line 1 column 53: unexpected end of file, expecting ',' or ']'"},
		{"[\n {\"conversations\": [{\"value\": \"a\"},\n  {\"value\": \"bc", "f.json: invalid JSON at line 3 column 13: unterminated string"},
		{`["ab\`, "f.json: invalid JSON at line 1 column 2: unterminated string"},
		{`["ab\u00`, "f.json: invalid JSON at line 1 column 2: unterminated string"},
		{"[\n{\"a\": \"é€😀\" \"b\"}]", "f.json: invalid JSON at line 2 column 13: unexpected '\"', expecting ',' or '}'"},
		{"[1,]", "f.json: invalid JSON at line 1 column 4: unexpected ']', expecting a value"},
		{"[01]", "f.json: invalid JSON at line 1 column 3: unexpected '1', expecting ',' or ']'"},
		{"[1.]", "f.json: invalid JSON at line 1 column 4: unexpected ']', expecting a digit"},
		{"[-]", "f.json: invalid JSON at line 1 column 3: unexpected ']', expecting a digit"},
		{"[tru]", "f.json: invalid JSON at line 1 column 2: unexpected 't', expecting a value"},
		{`[{"a" 1}]`, "f.json: invalid JSON at line 1 column 7: unexpected '1', expecting ':'"},
		{`[{1: 2}]`, "f.json: invalid JSON at line 1 column 3: unexpected '1', expecting a string key"},
		{"[\"a\tb\"]", "f.json: invalid JSON at line 1 column 4: invalid control character byte 0x09 in string"},
		{`["\x"]`, "f.json: invalid JSON at line 1 column 4: invalid escape \\x in string"},
		{`["\u12G4"]`, "f.json: invalid JSON at line 1 column 3: invalid \\uXXXX escape in string"},
		{"[\"a\xffb\"]", "f.json: invalid JSON at line 1 column 4: invalid UTF-8 in string"},
		{"[] []", "f.json: invalid JSON at line 1 column 4: extra data after the top-level value"},
		{strings.Repeat("[", 2000), "f.json: invalid JSON at line 1 column 1001: nesting too deep"},
		// Valid JSON of the wrong shape.
		{`{"conversations": []}`, "f.json: the top level is not a JSON list of conversations (line 1)"},
		{`"text"`, "f.json: the top level is not a JSON list of conversations (line 1)"},
		{"[\n{},\n[1]]", "f.json: entry 1: not an object (line 3)"},
		{"[\n{\"conversations\": [{\"from\": \"human\"}, {\"value\": \"b\"}]}]", `f.json: entry 0: conversations[0] has no "value" (line 2)`},
		{`[{}, {"conversation": [{"value": "a"}, {"from": "gpt"}]}]`, `f.json: entry 1: conversation[1] has no "value" (line 1)`},
		{`[{"conversations": [{"value": "a"}, {"value": 5}]}]`, `f.json: entry 0: conversations[1].value is not a string (line 1)`},
		{`[{"conversations": [{"value": "a"}, {"value": null}]}]`, `f.json: entry 0: conversations[1].value is not a string (line 1)`},
		{`[{"conversations": ["a", "b"]}]`, `f.json: entry 0: conversations[0] is not an object (line 1)`},
		{`[{"conversations": "ab"}]`, `f.json: entry 0: "conversations" is not a list (line 1)`},
		// Syntax errors come first, as Python parses before it looks.
		{"[1, {\"conversations\": 3}, ]", "f.json: invalid JSON at line 1 column 27: unexpected ']', expecting a value"},
	} {
		_, err := index([]byte(c.data))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.data, err, c.want)
		}
	}
}

// TestCorpusSmallReads runs the scanner with a tiny buffer so that every
// token straddles a refill.
func TestCorpusSmallReads(t *testing.T) {
	data := makeShareGPT(300)
	want, err := index(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{8, 9, 13} {
		c := &corpus{r: bytes.NewReader(data), label: "f"}
		s := newScanner(bytes.NewReader(data), size)
		if c.scan(s); s.err != nil {
			t.Fatalf("buffer %d: %v", size, s.err)
		}
		if !reflect.DeepEqual(c.pairs, want.pairs) {
			t.Fatalf("buffer %d: pairs differ", size)
		}
	}
	if _, err := index(append(data[:len(data)-3:len(data)-3], "\xe2\x82"...)); err == nil {
		t.Error("truncated file accepted")
	}
}

// model extracts the pairs as the reference does, from encoding/json's
// reading of the same text, with this package's stricter shape rules.
func model(data []byte) ([][2]string, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var top any
	if err := d.Decode(&top); err != nil {
		return nil, err
	}
	list, ok := top.([]any)
	if !ok {
		return nil, fmt.Errorf("top")
	}
	var out [][2]string
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("entry")
		}
		conv, ok := m["conversations"]
		if !ok {
			if conv, ok = m["conversation"]; !ok {
				continue
			}
		}
		turns, ok := conv.([]any)
		if !ok {
			return nil, fmt.Errorf("not list")
		}
		if len(turns) < 2 {
			continue
		}
		var pair [2]string
		for i := range pair {
			t, ok := turns[i].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("turn")
			}
			if pair[i], ok = t["value"].(string); !ok {
				return nil, fmt.Errorf("value")
			}
		}
		out = append(out, pair)
	}
	return out, nil
}

func FuzzCorpus(f *testing.F) {
	f.Add(makeShareGPT(12))
	f.Add([]byte(`[{"conversations": [{"value": "a\u00e9\ud800x"}, {"value": "b"}]}, {"conversation": [{"value": "c"}, {"value": ""}]}]`))
	f.Add([]byte(`[{"conversations": [{"value": "\ud83d\ude00\ud83d"}, {"value": "\"\\"}]}]`))
	f.Add([]byte(`[{"conversations": [1, 2]}, 3]`))
	f.Add([]byte(`[1e999, -0, NaN]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := index(data)
		want, merr := model(data)
		valid := json.Valid(data)
		special := bytes.Contains(data, []byte("NaN")) || bytes.Contains(data, []byte("Infinity"))
		switch {
		case err == nil:
			if !valid && !special {
				t.Fatalf("accepted invalid JSON")
			}
			if valid {
				if merr != nil {
					t.Fatalf("accepted a file encoding/json rejects: %v", merr)
				}
				if got := texts(t, c); !(len(got) == 0 && len(want) == 0) && !reflect.DeepEqual(got, want) {
					t.Fatalf("pairs %q, encoding/json gives %q", got, want)
				}
			}
		case strings.Contains(err.Error(), "invalid JSON"):
			if valid && utf8.Valid(data) && !strings.Contains(err.Error(), "nesting too deep") {
				t.Fatalf("rejected valid JSON: %v", err)
			}
		default: // a shape error
			if !valid && !special {
				t.Fatalf("shape error %v for invalid JSON", err)
			}
			if valid && merr == nil {
				t.Fatalf("shape error %v, but encoding/json reads %q", err, want)
			}
		}
	})
}
