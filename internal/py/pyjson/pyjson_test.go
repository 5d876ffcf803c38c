package pyjson

import (
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"
)

// Expected strings are what CPython 3.11's json.dumps prints.
func TestAppendString(t *testing.T) {
	cases := map[string]string{
		"plain":           `"plain"`,
		"a\"b\\c":         `"a\"b\\c"`,
		"\n\r\t\b\f\x01":  `"\n\r\t\b\f\u0001"`,
		"\x7f/":           `"\u007f/"`,
		"héllo 世界":        `"h\u00e9llo \u4e16\u754c"`,
		"😀":               `"\ud83d\ude00"`,
		"bad\xffbyte":     `"bad\ufffdbyte"`,
		"<tag>&amp;":      `"<tag>&amp;"`,
		"":                `""`,
		"\u2028\u2029end": `"\u2028\u2029end"`,
	}
	for in, want := range cases {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}

// Expected strings are what CPython's json.dumps(s, ensure_ascii=False)
// prints; invalid UTF-8, which a Python str cannot hold, is written as
// \ufffd.
func TestAppendQuotedUTF8(t *testing.T) {
	cases := map[string]string{
		"plain":          `"plain"`,
		"a\"b\\c":        `"a\"b\\c"`,
		"\n\r\t\b\f\x01": `"\n\r\t\b\f\u0001"`,
		"\x7f/":          "\"\x7f/\"",
		"héllo 世界":       `"héllo 世界"`,
		"😀":              `"😀"`,
		"\ufffd":         "\"\ufffd\"",
		"bad\xffbyte":    `"bad\ufffdbyte"`,
		"cut\xe4\xb8":    `"cut\ufffd\ufffd"`,
		"":               `""`,
	}
	for in, want := range cases {
		if got := string(AppendQuoted(nil, in, false)); got != want {
			t.Errorf("AppendQuoted(%q, false) = %s, want %s", in, got, want)
		}
	}
}

// FuzzAppendQuoted checks that both modes write valid JSON that decodes to
// the input (invalid UTF-8 read as U+FFFD), ASCII only with ensureASCII.
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\x00\x7f", "héllo 世界 😀", "bad\xff\xe4\xb8", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// One U+FFFD per invalid byte, as utf8.DecodeRune reads them.
		var b []byte
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r)
			i += size
		}
		want := string(b)
		for _, ascii := range []bool{true, false} {
			out := AppendQuoted(nil, s, ascii)
			var got string
			if err := json.Unmarshal(out, &got); err != nil || got != want {
				t.Fatalf("AppendQuoted(%q, %v) = %s: decodes to %q, %v", s, ascii, out, got, err)
			}
			if !utf8.Valid(out) {
				t.Fatalf("AppendQuoted(%q, %v) = %q: not UTF-8", s, ascii, out)
			}
			for _, c := range out {
				if ascii && c > '~' || c < ' ' {
					t.Fatalf("AppendQuoted(%q, %v) = %q: byte %#x unescaped", s, ascii, out, c)
				}
			}
		}
	})
}

func TestAppendFloat(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{{math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"}, {math.NaN(), "NaN"}, {1, "1.0"}, {1e-6, "1e-06"}, {0.1, "0.1"}}
	for _, c := range cases {
		if got := string(AppendFloat(nil, c.in)); got != c.want {
			t.Errorf("AppendFloat(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestObjectKeepsDictOrder(t *testing.T) {
	o := &Object{}
	o.Set("model", String("m"))
	o.Set("prompt", String("p"))
	o.Set("max_tokens", Int(8))
	extra, err := ParseObject([]byte(`{"max_tokens": 16, "top_k": 5, "nested": {"b": 1, "a": [1.0, 2e3, -0, 12345678901234567890]}}`))
	if err != nil {
		t.Fatal(err)
	}
	o.Update(extra)
	o.Set("model", String("lora"))
	o.Delete("prompt")
	want := `{"model": "lora", "max_tokens": 16, "top_k": 5, "nested": {"b": 1, "a": [1.0, 2000.0, 0, 12345678901234567890]}}`
	if got := string(o.Bytes()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestReformat(t *testing.T) {
	cases := map[string]string{
		`{"a":1,"b":{"c":[true,false,null]},"a":2}`: `{"a": 2, "b": {"c": [true, false, null]}}`,
		`[]`:             `[]`,
		`{}`:             `{}`,
		`{"x": 1e400}`:   `{"x": Infinity}`,
		`"caf\u00e9"`:    `"caf\u00e9"`,
		` 3.50 `:         `3.5`,
		`{"k":"\u00e9"}`: `{"k": "\u00e9"}`,
	}
	for in, want := range cases {
		got, err := Reformat(nil, []byte(in))
		if err != nil {
			t.Errorf("Reformat(%s): %v", in, err)
			continue
		}
		if string(got) != want {
			t.Errorf("Reformat(%s) = %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{`{"a":`, `{"a":1}x`, ``, `{"a" 1}`} {
		if _, err := Reformat(nil, []byte(bad)); err == nil {
			t.Errorf("Reformat(%q): no error", bad)
		}
	}
	if _, err := ParseObject([]byte(`[1]`)); err == nil {
		t.Error("ParseObject accepted an array")
	}
	// Cut short anywhere: one message that says so, never "EOF".
	for _, short := range []string{``, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":[1,`} {
		_, err := ParseObject([]byte(short))
		if err == nil || err.Error() != "invalid JSON: it ends early, before the value is complete" {
			t.Errorf("ParseObject(%q): %v", short, err)
		}
	}
}
