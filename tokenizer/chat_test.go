package tokenizer

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ardanlabs/jinja"

	"benchserve/internal/py/pyfmt"
)

// chatTok returns a Pretrained over a fake engine with the given config
// and the golden clock.
func chatTok(t *testing.T, cfg Config) *Pretrained {
	t.Helper()
	p, err := newPretrained("test/tok", newFakeEngine("<s>", "</s>"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.now = func() time.Time { return goldenNow }
	return p
}

// renderWith renders src with the variables in varsJSON (a JSON object,
// decoded as the messages are), through the same rewrite and helpers as
// ApplyChatTemplate.
func renderWith(t *testing.T, src, varsJSON string) (string, error) {
	t.Helper()
	p := chatTok(t, Config{})
	vars, err := p.chatVars(nil, ChatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if varsJSON != "" {
		v, err := jsonValue([]byte(varsJSON))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range v.AsDict().Keys {
			vars[k] = v.AsDict().Data[k]
		}
	}
	tmpl, err := p.compiled(src)
	if err != nil {
		return "", err
	}
	return tmpl.RenderValues(vars)
}

const pyValuesJSON = `{"x": {"b": 1.0, "a": [1, 2.5e-7, 1e16, 1e15, 0.0001, 0.00001, -0.0, 123456789012345678],
 "s": "é\u2028\u0001\"\\/<>&\ud83d\ude00\u007f", "e": {}, "l": [], "n": null, "t": true}}`

// TestPythonSemantics checks the rewritten filters and printing against
// what Python's jinja2, set up as transformers does, gives for the same
// template and values (the want strings were produced by it).
func TestPythonSemantics(t *testing.T) {
	tests := []struct{ src, vars, want string }{
		{"{{ x | tojson }}", pyValuesJSON,
			`{"b": 1.0, "a": [1, 2.5e-07, 1e+16, 1000000000000000.0, 0.0001, 1e-05, -0.0, 123456789012345678], "s": "é` + "\u2028" + `\u0001\"\\/<>&😀` + "\x7f" + `", "e": {}, "l": [], "n": null, "t": true}`},
		{"{{ x | tojson(indent=2) }}", pyValuesJSON,
			"{\n  \"b\": 1.0,\n  \"a\": [\n    1,\n    2.5e-07,\n    1e+16,\n    1000000000000000.0,\n    0.0001,\n    1e-05,\n    -0.0,\n    123456789012345678\n  ],\n  \"s\": \"é\u2028\\u0001\\\"\\\\/<>&😀\x7f\",\n  \"e\": {},\n  \"l\": [],\n  \"n\": null,\n  \"t\": true\n}"},
		{"{{ x | tojson(indent=0) }}", `{"x": {"a": [1], "b": {}}}`, "{\n\"a\": [\n1\n],\n\"b\": {}\n}"},
		{"{{ x | tojson(sort_keys=true, separators=(',', ':')) }}", pyValuesJSON,
			`{"a":[1,2.5e-07,1e+16,1000000000000000.0,0.0001,1e-05,-0.0,123456789012345678],"b":1.0,"e":{},"l":[],"n":null,"s":"é` + "\u2028" + `\u0001\"\\/<>&😀` + "\x7f" + `","t":true}`},
		{"{{ x | tojson(ensure_ascii=true) }}", pyValuesJSON,
			`{"b": 1.0, "a": [1, 2.5e-07, 1e+16, 1000000000000000.0, 0.0001, 1e-05, -0.0, 123456789012345678], "s": "\u00e9\u2028\u0001\"\\/<>&\ud83d\ude00\u007f", "e": {}, "l": [], "n": null, "t": true}`},
		{"{{ x | tojson(indent=t) }}", `{"t": "\t", "x": {"a": [1, {"b": null}]}}`, "{\n\t\"a\": [\n\t\t1,\n\t\t{\n\t\t\t\"b\": null\n\t\t}\n\t]\n}"},
		{"{{ none }}|{{ true }}|{{ 10 }}|{{ x }}",
			`{"x": [1, "a", null, "it's", "say \"hi\"", "both ' \"", "\n\t\\", 1.5, true, {"k": [null]}]}`,
			`None|True|10|[1, 'a', None, "it's", 'say "hi"', 'both \' "', '\n\t\\', 1.5, True, {'k': [None]}]`},
		{"{{ x.a }}|{{ x.b }}|{{ x.n }}|{{ x.e }}", pyValuesJSON,
			"[1, 2.5e-07, 1e+16, 1000000000000000.0, 0.0001, 1e-05, -0.0, 123456789012345678]|1.0|None|{}"},
		{"[{{ y | trim }}]|[{{ z | trim }}]|[{{ z | trim(c) }}]|{{ n | string }}|{{ f | string }}",
			`{"y": null, "z": "\u001c\u001d  text \u3000\u001f", "c": "\u001c x", "n": null, "f": 3.0}`,
			"[None]|[text]|[\x1d  text \u3000\x1f]|None|3.0"},
		{"{{ strftime_now('%a %A %w %d %b %B %m %y %Y %H %I %p %M %S %f %j %U %W %c %x %X %% %e %Q') }}", "",
			"Fri Friday 5 26 Jul July 07 24 2024 14 02 PM 05 09 000000 208 29 30 Fri Jul 26 14:05:09 2024 07/26/24 14:05:09 % 26 %Q"},
		// Literals stay out of the rewrite.
		{`{{ "a|tojson" ~ '}}' }}{# {{ x|tojson }} #}{% raw %}{{ x|tojson }}{% endraw %}`, `{"x": 1}`, "a|tojson}}{{ x|tojson }}"},
		{"{%- set y = x | tojson -%}\n  {{- y -}}  ", `{"x": {"k": 1.0}}`, `{"k": 1.0}`},
	}
	for _, tt := range tests {
		got, err := renderWith(t, tt.src, tt.vars)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.src, got, tt.want)
		}
	}
}

func TestTojsonErrors(t *testing.T) {
	for _, tt := range []struct{ src, vars, want string }{
		{"{{ undefined_thing | tojson }}", "", "Object of type Undefined is not JSON serializable"},
		{"{{ x | tojson(indent=[1]) }}", `{"x": 1}`, "indent must be an int or a string"},
		{"{{ x | tojson(separators=1) }}", `{"x": 1}`, "separators must be a pair of strings"},
		{"{{ x | tojson(bogus=1) }}", `{"x": 1}`, "unexpected keyword argument 'bogus'"},
		{"{{ raise_exception('Roles must alternate') }}", "", "the template raised: Roles must alternate"},
		{"{{ strftime_now() }}", "", "strftime_now(format) takes one string"},
	} {
		_, err := renderWith(t, tt.src, tt.vars)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.src, err, tt.want)
		}
	}
}

// TestFloatRepr pins the repr(float) that templates print (str(), tojson).
func TestFloatRepr(t *testing.T) {
	// Python: repr(float(x)) for each.
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", -1.5: "-1.5", 0.1: "0.1", 1e15: "1000000000000000.0", 1e16: "1e+16",
		1.5e16: "1.5e+16", 123456789.125: "123456789.125", 1e-4: "0.0001", 1.2e-5: "1.2e-05",
		1e22: "1e+22", 5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
		0.30000000000000004: "0.30000000000000004", 9007199254740993: "9007199254740992.0",
	} {
		if got := pyfmt.Float(f); got != want {
			t.Errorf("pyfmt.Float(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestStrRepr(t *testing.T) {
	// Python: repr(s) for each.
	for s, want := range map[string]string{
		"":                   "''",
		"it's":               `"it's"`,
		`a"b`:                `'a"b'`,
		`it's "x"`:           `'it\'s "x"'`,
		"\x00\x1f\x7f":       `'\x00\x1f\x7f'`,
		"é\u00a0\u00ad":      `'é\xa0\xad'`,
		"\u2028\U000e0001😀中": `'\u2028\U000e0001😀中'`,
	} {
		var sb strings.Builder
		writeStrRepr(&sb, s)
		if sb.String() != want {
			t.Errorf("repr(%q) = %s, want %s", s, sb.String(), want)
		}
	}
}

func TestRewriteTemplate(t *testing.T) {
	for src, want := range map[string]string{
		"hello":                                 "hello",
		"{{ x }}":                               "{{ ( x )|__benchserve_print }}",
		"{{- x -}}":                             "{{- ( x )|__benchserve_print -}}",
		"{{ x|trim|tojson(indent=4) }}":         "{{ ( x|__benchserve_trim|__benchserve_tojson(indent=4) )|__benchserve_print }}",
		"{% if x | string == 'a|trim' %}":       "{% if x | __benchserve_string == 'a|trim' %}",
		"{{ 'x }}' }}":                          "{{ ( 'x }}' )|__benchserve_print }}",
		"{{ }}":                                 "{{ }}",
		"{{ x":                                  "{{ x",
		"{# {{ x }} #}{{ y }}":                  "{# {{ x }} #}{{ ( y )|__benchserve_print }}",
		"{%- raw -%}{{ x|trim }}{%- endraw -%}": "{%- raw -%}{{ x|trim }}{%- endraw -%}",
		"{{ x|trimmed }}":                       "{{ ( x|trimmed )|__benchserve_print }}",
	} {
		if got := rewriteTemplate(src); got != want {
			t.Errorf("rewriteTemplate(%q)\n got %q\nwant %q", src, got, want)
		}
	}
}

func FuzzRewriteTemplate(f *testing.F) {
	for _, s := range []string{"{{ x|tojson }}", "{% raw %}{{", "{{ '", "{#", "{%- if a|trim %}{{ b }}{% endif %}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out := rewriteTemplate(src)
		// Text outside tags is kept: the rewrite only grows the source.
		if len(out) < len(src) {
			t.Fatalf("rewrite shrank %q to %q", src, out)
		}
		if !strings.Contains(src, "{") && out != src {
			t.Fatalf("rewrite changed tag-free %q", src)
		}
		// Rendering must not panic, whatever the outcome.
		if tmpl, err := jinja.Compile(out); err == nil {
			_, _ = tmpl.RenderValues(map[string]jinja.Value{})
		}
	})
}

func TestPickTemplate(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "hi"}}
	named := Config{ChatTemplates: map[string]string{
		"default":  "D{{ messages[0].content }}",
		"tool_use": "T{{ tools | length }}",
		"rag":      "R",
	}}
	p := chatTok(t, named)
	for _, tt := range []struct {
		opt  ChatOptions
		want string
	}{
		{ChatOptions{}, "Dhi"},
		{ChatOptions{Tools: json.RawMessage(`[{"a": 1}]`)}, "T1"},
		{ChatOptions{Template: "rag"}, "R"},
		{ChatOptions{Template: "rag", Tools: json.RawMessage(`[]`)}, "R"},
		{ChatOptions{Template: "X{{ add_generation_prompt }}", AddGenerationPrompt: true}, "XTrue"},
	} {
		got, err := p.ApplyChatTemplate(msgs, tt.opt)
		if err != nil || got != tt.want {
			t.Errorf("%+v: got %q, %v; want %q", tt.opt, got, err, tt.want)
		}
	}

	noDefault := chatTok(t, Config{ChatTemplates: map[string]string{"a": "A", "b": "B"}})
	_, err := noDefault.ApplyChatTemplate(msgs, ChatOptions{})
	if !errors.Is(err, ErrNoChatTemplate) || !strings.Contains(err.Error(), "(a, b)") {
		t.Errorf("several templates, no default: %v", err)
	}
	none := chatTok(t, Config{})
	if _, err := none.ApplyChatTemplate(msgs, ChatOptions{}); !errors.Is(err, ErrNoChatTemplate) || !strings.Contains(err.Error(), "test/tok") {
		t.Errorf("no template: %v", err)
	}
	if none.HasChatTemplate() || !p.HasChatTemplate() {
		t.Error("HasChatTemplate wrong")
	}
	if got := p.ChatTemplateNames(); strings.Join(got, ",") != "default,rag,tool_use" {
		t.Errorf("ChatTemplateNames = %v", got)
	}
}

func TestChatVariables(t *testing.T) {
	cfg := Config{BOS: "<s>", EOS: "</s>", PAD: "<pad>", Additional: []string{"<a>", "<b>"},
		ChatTemplates: map[string]string{"default": "{{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ unk_token is defined }}|" +
			"{{ additional_special_tokens }}|{{ tools }}|{{ documents }}|{{ add_generation_prompt }}|{{ enable_thinking }}|" +
			"{{ extra | tojson }}|{% for m in messages %}{{ m.role }}={{ m.content }};{% endfor %}"}}
	p := chatTok(t, cfg)
	got, err := p.ApplyChatTemplate([]Message{{Role: "system", Content: "S"}, {Raw: json.RawMessage(`{"role": "user", "content": "U"}`)}},
		ChatOptions{Extra: map[string]any{"enable_thinking": false, "extra": json.RawMessage(`{"z": 1, "a": [true]}`), "eos_token": "<E>"}})
	want := `<s>|<E>|<pad>|False|['<a>', '<b>']|None|None|False|False|{"z": 1, "a": [true]}|system=S;user=U;`
	if err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
	for _, k := range []string{"messages", "tools", "documents", "add_generation_prompt"} {
		_, err := p.ApplyChatTemplate(nil, ChatOptions{Extra: map[string]any{k: 1}})
		if err == nil || !strings.Contains(err.Error(), "extra variable "+k) {
			t.Errorf("Extra[%s]: %v", k, err)
		}
	}
}

func TestChatErrors(t *testing.T) {
	p := chatTok(t, Config{ChatTemplates: map[string]string{
		"default": "{{ raise_exception('bad roles') }}",
		"broken":  "{% for x in %}",
	}})
	msgs := []Message{{Role: "user", Content: "hi"}}
	for _, tt := range []struct {
		name string
		opt  ChatOptions
		msgs []Message
		want []string
	}{
		{"raise", ChatOptions{}, msgs, []string{"tokenizer test/tok", `chat template "default" failed`, "bad roles"}},
		{"compile", ChatOptions{Template: "broken"}, msgs, []string{"tokenizer test/tok", `chat template "broken"`}},
		{"tools", ChatOptions{Tools: json.RawMessage(`{"a": 1}`)}, msgs, []string{"tools: want a JSON array"}},
		{"bad tools", ChatOptions{Tools: json.RawMessage(`[1,`)}, msgs, []string{"tools: invalid JSON"}},
		{"bad message", ChatOptions{}, []Message{{Raw: json.RawMessage(`[1]`)}}, []string{"messages[0]: want an object"}},
	} {
		_, err := p.ApplyChatTemplate(tt.msgs, tt.opt)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to contain %q", tt.name, err, w)
			}
		}
	}
	if _, err := MessagesFromJSON([]byte(`{"role": "user"}`)); err == nil {
		t.Error("MessagesFromJSON accepted an object")
	}
	if _, err := MessagesFromJSON([]byte(`[{"role": "user"}, 3]`)); err == nil || !strings.Contains(err.Error(), "messages[1]") {
		t.Errorf("MessagesFromJSON([obj, 3]): %v", err)
	}
}

// TestChatTemplateIDs checks tokenize=True: the text encoded without the
// special tokens add_bos_token would add.
func TestChatTemplateIDs(t *testing.T) {
	on := true
	p := chatTok(t, Config{BOS: "<s>", EOS: "</s>", AddBOS: &on,
		ChatTemplates: map[string]string{"default": "{{ bos_token }}{{ messages[0].content }}"}})
	ids, err := p.ApplyChatTemplateIDs([]Message{{Role: "user", Content: "ab"}}, ChatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := p.Encode("<s>ab", false)
	if len(ids) != 3 || !equalInts(ids, want) || equalInts(ids, p.Encode("<s>ab", true)) {
		t.Errorf("ids %v, want %v (no BOS added on top)", ids, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestChatConcurrent renders from many goroutines at once (run with -race).
func TestChatConcurrent(t *testing.T) {
	p := chatTok(t, Config{ChatTemplates: map[string]string{"default": "{% for m in messages %}{{ m.content | trim }}{{ m | tojson }}{% endfor %}"}})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := []Message{{Role: "user", Content: strings.Repeat("x", i)}}
			got, err := p.ApplyChatTemplate(msgs, ChatOptions{})
			if err != nil {
				errs <- err
				return
			}
			if want := strings.Repeat("x", i) + `{"role": "user", "content": "` + strings.Repeat("x", i) + `"}`; got != want {
				errs <- errors.New(got + " != " + want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
