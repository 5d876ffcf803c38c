package argparse

import "testing"

// reprCases: repr(s) as CPython 3.11.7 printed it.
var reprCases = []struct{ in, want string }{
	{"", "''"},
	{"a", "'a'"},
	{"it's", "\"it's\""},
	{"say \"hi\"", "'say \"hi\"'"},
	{"both ' and \"", "'both \\' and \"'"},
	{"back\\slash", "'back\\\\slash'"},
	{"\t\n\r", "'\\t\\n\\r'"},
	{"\u0000\u001f\u007f", "'\\x00\\x1f\\x7f'"},
	{"\u0080\u009f\u00a0\u00ad\u00ff", "'\\x80\\x9f\\xa0\\xad\u00ff'"},
	{"\u00e9\u4e2d", "'\u00e9\u4e2d'"},
	{"\u200b\u2028\u3000", "'\\u200b\\u2028\\u3000'"},
	{"\U0001F600", "'\U0001F600'"},
	{"\U000E0001", "'\\U000e0001'"},
	// A byte that is not UTF-8 reaches Python as a surrogateescape
	// surrogate: repr(b'a\xff'.decode('utf-8', 'surrogateescape')).
	{"a\xff", "'a\\udcff'"},
}

func TestRepr(t *testing.T) {
	for _, c := range reprCases {
		if got := Repr(c.in); got != c.want {
			t.Errorf("Repr(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestReprValue(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, "None"}, {true, "True"}, {false, "False"}, {-3, "-3"}, {8.0, "8.0"},
		{[]any{"a", 1}, "['a', 1]"}, {[]string{}, "[]"}, {[]int{1, 2}, "[1, 2]"},
		{[]float64{0.5}, "[0.5]"},
	}
	for _, c := range cases {
		if got := ReprValue(c.in); got != c.want {
			t.Errorf("ReprValue(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}
