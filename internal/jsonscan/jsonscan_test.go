package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseValidates(t *testing.T) {
	good := []string{
		`{}`, ` [ ] `, `{"a":[1,-2.5e+3,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9"]}`,
		`0`, `-0.0`, `"\ud83d\ude00"`, `NaN`, `-Infinity`, `[Infinity]`, "{\"k\" :\t1 ,\n\"j\":{}}",
	}
	for _, s := range good {
		if _, err := Parse([]byte(s)); err != nil {
			t.Errorf("Parse(%s): %v", s, err)
		}
	}
	bad := []string{
		``, `  `, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `.5`, `1e`, `-`,
		`"abc`, `"\x"`, `"\u12"`, "\"a\x01b\"", `tru`, `{"a":1}x`, `{a:1}`, `'s'`, `[}`, `{]`,
		strings.Repeat("[", 2000) + strings.Repeat("]", 2000),
	}
	for _, s := range bad {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("Parse(%q): no error", s)
		}
	}
}

func TestErrorNamesTheByte(t *testing.T) {
	_, err := Parse([]byte(`{"a": x}`))
	if err == nil || err.Error() != `invalid JSON at byte 7: unexpected character 'x'` {
		t.Fatalf("got %v", err)
	}
}

func TestMembersAndGet(t *testing.T) {
	v, err := Parse([]byte(`{"choices":[{"text":"hi","x":{"text":"no"}}],"usage":null,"te\u0078t":"esc","n":3,"n":4}`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	it := v.Members()
	for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
		keys = append(keys, string(k))
	}
	if strings.Join(keys, ",") != `choices,usage,te\u0078t,n,n` {
		t.Fatalf("keys %q", keys)
	}
	choices, _ := v.Get("choices")
	first, ok := choices.First()
	if !ok {
		t.Fatal("no first choice")
	}
	text, _ := first.Get("text")
	if got := string(text.AppendString(nil)); got != "hi" {
		t.Errorf("text = %q", got)
	}
	if u, ok := v.Get("usage"); !ok || !u.IsNull() {
		t.Errorf("usage = %v %v", u, ok)
	}
	if e, ok := v.Get("text"); !ok || string(e.AppendString(nil)) != "esc" {
		t.Errorf("escaped key not found: %v %v", e, ok)
	}
	if n, _ := v.Get("n"); string(n.Raw) != "4" {
		t.Errorf("repeated key: got %s, want the last", n.Raw)
	}
	if _, ok := v.Get("missing"); ok {
		t.Error("found a missing key")
	}
	if _, ok := text.Get("x"); ok {
		t.Error("Get on a string found something")
	}
}

func TestStrings(t *testing.T) {
	cases := map[string]string{
		`""`:                     "",
		`"plain"`:                "plain",
		`"a\"b\\c\/d"`:           `a"b\c/d`,
		`"\n\t\r\b\f"`:           "\n\t\r\b\f",
		`"\u00e9\u4e16"`:         "é世",
		`"\ud83d\ude00!"`:        "😀!",
		`"\ud83d"`:               "\uFFFD",
		`"\ud83dx"`:              "\uFFFDx",
		`"\ude00\ud83d\ude00"`:   "\uFFFD😀",
		`"\u003cb\u003e\u0026"`:  "<b>&",
		`"廣 ότη"`:                "廣 ότη",
		`"x\ud83d\u0041"`:        "x\uFFFDA",
		`"\\u0041"`:              `\u0041`,
		`"tab\there\u0000nul"`:   "tab\there\x00nul",
		`"end\\"`:                `end\`,
		`"\uD83D\uDE00 upper"`:   "😀 upper",
		`"mixed \" and \\\" ok"`: `mixed " and \" ok`,
	}
	for in, want := range cases {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("Parse(%s): %v", in, err)
			continue
		}
		if got := string(v.AppendString(nil)); got != want {
			t.Errorf("%s decoded to %q, want %q", in, got, want)
		}
	}
}

func TestNumbers(t *testing.T) {
	ints := map[string]int64{"0": 0, "-7": -7, "123456789012": 123456789012, "8.0": 8, "1e3": 1000, "9223372036854775807": math.MaxInt64}
	for in, want := range ints {
		v, _ := Parse([]byte(in))
		if got, ok := v.Int(); !ok || got != want {
			t.Errorf("Int(%s) = %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"1.5", "1e300", `"3"`, "null", "NaN"} {
		v, _ := Parse([]byte(in))
		if _, ok := v.Int(); ok {
			t.Errorf("Int(%s) ok", in)
		}
	}
	v, _ := Parse([]byte("2.75"))
	if f, ok := v.Float(); !ok || f != 2.75 {
		t.Errorf("Float = %v %v", f, ok)
	}
	v, _ = Parse([]byte("1e999"))
	if f, ok := v.Float(); !ok || !math.IsInf(f, 1) {
		t.Errorf("Float(1e999) = %v %v, want +Inf as Python", f, ok)
	}
}

func TestTruthy(t *testing.T) {
	cases := map[string]bool{
		`null`: false, `false`: false, `true`: true, `0`: false, `0.0`: false, `-0`: false, `3`: true,
		`""`: false, `"a"`: true, `{}`: false, `{ }`: false, `{"a":0}`: true, `[]`: false, `[0]`: true,
	}
	for in, want := range cases {
		v, _ := Parse([]byte(in))
		if v.Truthy() != want {
			t.Errorf("Truthy(%s) = %v", in, !want)
		}
	}
	if (Value{}).Truthy() {
		t.Error("zero Value is truthy")
	}
}

func TestNoAllocations(t *testing.T) {
	doc := []byte(`{"id":"x","choices":[{"index":0,"delta":{"content":"caf\u00e9 \ud83d\ude00"}}],"usage":{"prompt_tokens":7,"completion_tokens":4},"meta_info":{"spec_accept_length":2.5}}`)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		v, err := Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		it := v.Members()
		for k, val, ok := it.Next(); ok; k, val, ok = it.Next() {
			switch {
			case KeyIs(k, "choices"):
				c, _ := val.First()
				d, _ := c.Get("delta")
				s, _ := d.Get("content")
				buf = s.AppendString(buf[:0])
			case KeyIs(k, "usage"):
				n, _ := val.Get("completion_tokens")
				n.Int()
			case KeyIs(k, "meta_info"):
				f, _ := val.Get("spec_accept_length")
				f.Float()
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations", allocs)
	}
	if string(buf) != "café 😀" {
		t.Errorf("content = %q", buf)
	}
}

// TestWalkNeverPanics walks values that did not come from Parse.
func TestWalkNeverPanics(t *testing.T) {
	for _, raw := range []string{``, `{`, `{"a`, `{"a":`, `{"a":[1,{"b":"\`, `[`, `[1,`, `["\\`, `{"a" 1}`, `{"":{}`} {
		for _, k := range []Kind{Object, Array, String, Number} {
			v := Value{Kind: k, Raw: []byte(raw)}
			v.Get("a")
			v.First()
			v.Truthy()
			v.AppendString(nil)
			v.Int()
			it := v.Members()
			for _, val, ok := it.Next(); ok; _, val, ok = it.Next() {
				val.Get("b")
			}
		}
	}
}

// FuzzParse checks validity and string decoding against encoding/json.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b\u00e9",{"c":null}]}`, `"\ud800"`, `[1e5,-0.5]`, `{"x":"\\\""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, err := Parse(doc)
		if !utf8.Valid(doc) || bytes.Contains(doc, []byte("NaN")) || bytes.Contains(doc, []byte("Infinity")) {
			return
		}
		if (err == nil) != json.Valid(doc) {
			t.Fatalf("Parse error %v, but json.Valid says %v", err, json.Valid(doc))
		}
		var keys [][]byte
		ov, oerr := ParseObject(doc, func(k []byte, _ Value) { keys = append(keys, k) })
		if (oerr == nil) != (err == nil) || (err == nil && (ov.Kind != v.Kind || !bytes.Equal(ov.Raw, v.Raw))) {
			t.Fatalf("ParseObject: %v %s, Parse: %v %s", oerr, ov.Raw, err, v.Raw)
		}
		if err == nil {
			it := v.Members()
			for i := 0; ; i++ {
				k, _, ok := it.Next()
				if !ok {
					if i != len(keys) {
						t.Fatalf("ParseObject saw %d members, Members %d", len(keys), i)
					}
					break
				}
				if i >= len(keys) || !bytes.Equal(k, keys[i]) {
					t.Fatalf("member %d: %q vs ParseObject's %q", i, k, keys)
				}
			}
		}
		var any any
		if err != nil || json.Unmarshal(doc, &any) != nil {
			return // a number out of float64 range: Python reads it as inf
		}
		walk(t, v, any)
	})
}

func walk(t *testing.T, v Value, want any) {
	switch w := want.(type) {
	case string:
		if got := string(v.AppendString(nil)); got != w {
			t.Fatalf("string %s decoded to %q, encoding/json says %q", v.Raw, got, w)
		}
	case map[string]any:
		it := v.Members()
		for k, val, ok := it.Next(); ok; k, val, ok = it.Next() {
			key := Value{Kind: String, Raw: append(append([]byte{'"'}, k...), '"')}
			name := string(key.AppendString(nil))
			if !KeyIs(k, name) && len(name) <= 64 {
				t.Fatalf("KeyIs(%s, %q) false", k, name)
			}
			last, _ := v.Get(name)
			if len(name) <= 64 && !bytes.Equal(last.Raw, val.Raw) {
				continue // a repeated key: encoding/json kept the last one
			}
			walk(t, val, w[name])
		}
	case []any:
		it := v.Elements()
		i := 0
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			walk(t, e, w[i])
			i++
		}
		if i != len(w) {
			t.Fatalf("%d elements, want %d", i, len(w))
		}
	}
}

func TestUnquoteAt(t *testing.T) {
	cases := []struct {
		doc, want string
		end       int
	}{
		{`"plain" x`, "plain", 7},
		{`"a\nb\t\"\\\/\b\f\r"`, "a\nb\t\"\\/\b\f\r", 20},
		{`"\u00e9\u4e2d"`, "é中", 14},
		{`"\ud83d\ude00"`, "😀", 14},
		{`"\ud83d x"`, "\uFFFD x", 10},
	}
	for _, c := range cases {
		got, end, err := UnquoteAt([]byte("<"), []byte(c.doc), 0)
		if err != nil || string(got) != "<"+c.want || end != c.end {
			t.Errorf("%s: %q, %d, %v; want %q, %d", c.doc, got, end, err, "<"+c.want, c.end)
		}
	}
	for _, doc := range []string{`"abc`, `"a\qb"`, `"\u12g4"`, "\"a\x01\""} {
		var se *SyntaxError
		if _, _, err := UnquoteAt(nil, []byte(doc), 0); !errors.As(err, &se) {
			t.Errorf("%q: err %v, want a *SyntaxError", doc, err)
		}
	}
}

// FuzzRuns checks the eight-bytes-at-a-time run finders against a byte
// loop.
func FuzzRuns(f *testing.F) {
	f.Add([]byte("abcdefgh\"ijklmnop"), 0)
	f.Add([]byte("\x1f\x20\x21abcdefghijk\\"), 1)
	f.Add([]byte("0123456789abcdef\x7f\x80"), 3)
	f.Add([]byte("héllo wörld, 世界 \x00"), 2)
	f.Fuzz(func(t *testing.T, b []byte, i int) {
		if i < 0 || i > len(b) {
			return
		}
		ends := func(c byte, ascii bool) bool { return c == '"' || c == '\\' || c < 0x20 || ascii && c >= 0x80 }
		for _, ascii := range []bool{false, true} {
			want := i
			for want < len(b) && !ends(b[want], ascii) {
				want++
			}
			got := StringRun(b, i)
			if ascii {
				got = ASCIIRun(b, i)
			}
			if got != want {
				t.Fatalf("run(%q, %d, ascii %v) = %d, want %d", b, i, ascii, got, want)
			}
		}
	})
}

// FuzzAppendUnquoted: valid content decodes as encoding/json does; anything
// else must not panic.
func FuzzAppendUnquoted(f *testing.F) {
	f.Add([]byte(`a\"b\u00e9\ud83d\ude00\ud800\n\/\b\f\r\t`))
	f.Add([]byte(`trailing\`))
	f.Add([]byte(`\u12`))
	f.Add([]byte(`\ud83d\u0041`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := string(AppendUnquoted(nil, raw))
		var want string
		quoted := append(append([]byte{'"'}, raw...), '"')
		if utf8.Valid(raw) && json.Unmarshal(quoted, &want) == nil && got != want {
			t.Fatalf("AppendUnquoted(%q) = %q, encoding/json gives %q", raw, got, want)
		}
	})
}

func TestEscapes(t *testing.T) {
	for c, want := range map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'} {
		if got, ok := Unescape(c); !ok || got != want {
			t.Errorf("Unescape(%q) = %q, %v", c, got, ok)
		}
	}
	for _, c := range []byte{'u', 'x', 0, '0', 'N'} {
		if _, ok := Unescape(c); ok {
			t.Errorf("Unescape(%q) accepted", c)
		}
	}
	for in, want := range map[string]rune{"00e9": 0xe9, "D83d": 0xd83d, "ffff": 0xffff, "0g00": -1, "12": -1} {
		r, ok := Hex4([]byte(in), 0)
		if !ok {
			r = -1
		}
		if r != want {
			t.Errorf("Hex4(%q) = %x, %v", in, r, ok)
		}
	}
	if _, ok := Hex4([]byte(`\u00e9`), 3); ok {
		t.Error("Hex4 read past the end")
	}
	doc := []byte(`{"a": [1, {"b": "x\"}"}], "c": tru`)
	if got := End(doc, 6); got != 24 {
		t.Errorf("End = %d, want 24", got)
	}
	if got := End(doc, 33); got != len(doc) {
		t.Errorf("End of a cut literal = %d, want %d", got, len(doc))
	}
}
