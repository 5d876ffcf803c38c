package pyfmt

import (
	"math"
	"testing"
)

// The expected strings are what CPython 3.11 prints for repr(x).
func TestFloat(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {-2.5, "-2.5"},
		{8, "8.0"}, {16.5, "16.5"}, {0.1, "0.1"}, {1.0 / 3, "0.3333333333333333"},
		{1e15, "1000000000000000.0"}, {1e16, "1e+16"}, {1.5e16, "1.5e+16"},
		{123456789012345678, "1.2345678901234568e+17"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {1.5e-7, "1.5e-07"}, {2.5e-300, "2.5e-300"},
		{1e100, "1e+100"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"},
		{123.456, "123.456"}, {0.30000000000000004, "0.30000000000000004"},
	}
	for _, c := range cases {
		if got := Float(c.in); got != c.want {
			t.Errorf("Float(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFixed(t *testing.T) {
	cases := []struct {
		in   float64
		prec int
		want string
	}{
		{0.125, 2, "0.12"}, {0.375, 2, "0.38"}, {2.675, 2, "2.67"}, {1234.5, 2, "1234.50"},
		{math.Inf(1), 2, "inf"}, {math.NaN(), 2, "nan"}, {-0.001, 2, "-0.00"}, {99.95, 1, "100.0"},
	}
	for _, c := range cases {
		if got := Fixed(c.in, c.prec); got != c.want {
			t.Errorf("Fixed(%v, %d) = %q, want %q", c.in, c.prec, got, c.want)
		}
	}
}

func TestCenter(t *testing.T) {
	cases := map[string]string{
		" Serving Benchmark Result ":              "============ Serving Benchmark Result ============",
		"Time per Output Token (excl. 1st token)": "-----Time per Output Token (excl. 1st token)------",
		"Cache Hit Details":                       "----------------Cache Hit Details-----------------",
	}
	for in, want := range cases {
		c := byte('-')
		if in[0] == ' ' {
			c = '='
		}
		if got := Center(in, c, 50); got != want {
			t.Errorf("Center(%q) = %q, want %q", in, got, want)
		}
	}
}

// The expected strings are what CPython 3.11 prints for "{:<w}".format(s).
func TestLeft(t *testing.T) {
	cases := []struct {
		in   string
		w    int
		want string
	}{
		{"ab", 4, "ab  "}, {"abcdef", 4, "abcdef"}, {"", 2, "  "}, {"été", 5, "été  "}, {"😀", 2, "😀 "},
	}
	for _, c := range cases {
		if got := Left(c.in, c.w); got != c.want {
			t.Errorf("Left(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

// Expected strings are CPython 3.11's repr().
func TestQuote(t *testing.T) {
	cases := map[string]string{
		"abc":              `'abc'`,
		"it's":             `"it's"`,
		`both ' and "`:     `'both \' and "'`,
		"a\\b\n\t\x01":     `'a\\b\n\t\x01'`,
		"héllo 世界 😀":       `'héllo 世界 😀'`,
		"\u00a0\u200b\x7f": `'\xa0\u200b\x7f'`,
	}
	for in, want := range cases {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
