package pyfmt

import (
	"strconv"
	"testing"
)

// numberCases: a string, then repr(int(s)) and repr(float(s)) as CPython
// 3.11.7 printed them ("" where Python raised ValueError).
var numberCases = []struct{ in, asInt, asFloat string }{
	{"0", "0", "0.0"},
	{"-0", "0", "-0.0"},
	{"+5", "5", "5.0"},
	{" 7 ", "7", "7.0"},
	{"\t7\n", "7", "7.0"},
	{"\u000b7\f", "7", "7.0"},
	{"\u001c5", "", ""},
	{"007", "7", "7.0"},
	{"0_7", "7", "7.0"},
	{"1_000", "1000", "1000.0"},
	{"1__0", "", ""},
	{"_1", "", ""},
	{"1_", "", ""},
	{"1.0", "", "1.0"},
	{"1e3", "", "1000.0"},
	{"", "", ""},
	{"+", "", ""},
	{"-", "", ""},
	{"- 1", "", ""},
	{"+-1", "", ""},
	{"0x10", "", ""},
	{"\u0663", "3", "3.0"},
	{"\uff15\uff10", "50", "50.0"},
	{"\u20035", "5", "5.0"},
	{"\u00a05", "5", "5.0"},
	{"\u00855", "5", "5.0"},
	{"\u2028 5", "5", "5.0"},
	{"1\u20030", "", ""},
	{"9223372036854775807", "9223372036854775807", "9.223372036854776e+18"},
	{"-9223372036854775808", "-9223372036854775808", "-9.223372036854776e+18"},
	{"1.5", "", "1.5"},
	{".5", "", "0.5"},
	{"5.", "", "5.0"},
	{"-.5", "", "-0.5"},
	{"+.5", "", "0.5"},
	{".", "", ""},
	{"e3", "", ""},
	{"1e", "", ""},
	{"1e+", "", ""},
	{"1e-3", "", "0.001"},
	{"1E3", "", "1000.0"},
	{"5.e3", "", "5000.0"},
	{".e3", "", ""},
	{"1_0.5", "", "10.5"},
	{"1._5", "", ""},
	{"1_.5", "", ""},
	{"1e1_0", "", "10000000000.0"},
	{"1e_1", "", ""},
	{"inf", "", "inf"},
	{"-inf", "", "-inf"},
	{"+Infinity", "", "inf"},
	{"iNfInItY", "", "inf"},
	{"infinit", "", ""},
	{"nan", "", "nan"},
	{"-NaN", "", "nan"},
	{"in f", "", ""},
	{"1e400", "", "inf"},
	{"-1e400", "", "-inf"},
	{"1e-400", "", "0.0"},
	{"\u0663.\u0665", "", "3.5"},
	{"1.5.", "", ""},
	{"1e3.5", "", ""},
	{"0x1p3", "", ""},
	{"1,5", "", ""},
	{"\u0661e\u0662", "", "100.0"},
	{"\U0001D7D9", "1", "1.0"},
	{"\U0001D7E2", "0", "0.0"},
}

func TestParseIntFloatMatchPython(t *testing.T) {
	for _, c := range numberCases {
		got := ""
		if n, err := ParseInt(c.in); err == nil {
			got = strconv.Itoa(n)
		}
		if got != c.asInt {
			t.Errorf("ParseInt(%q) = %q, want %q", c.in, got, c.asInt)
		}
		got = ""
		if f, err := ParseFloat(c.in); err == nil {
			got = Float(f)
		}
		if got != c.asFloat {
			t.Errorf("ParseFloat(%q) = %q, want %q", c.in, got, c.asFloat)
		}
	}
}

// Python ints have no bound; ours are int64, and larger values are an
// error (a documented deviation).
func TestParseIntOverflow(t *testing.T) {
	for _, s := range []string{"9223372036854775808", "-9223372036854775809", "100000000000000000000"} {
		if n, err := ParseInt(s); err == nil {
			t.Errorf("ParseInt(%q) = %d, want an error", s, n)
		}
	}
}
