package report

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"benchserve/internal/testenv"
)

// The golden is what tabulate itself printed for cases.json; render.py
// rewrites it (see there). Go never writes it.
var (
	tabCases  = filepath.Join("testdata", "tabulate", "cases.json")
	tabGolden = filepath.Join("testdata", "tabulate", "golden.txt")
	tabRender = filepath.Join("testdata", "tabulate", "render.py")
)

const tabPython = "/usr/bin/python3" // Debian's, where apt puts python3-tabulate

type tabCase struct {
	Name    string
	Headers []string
	Rows    [][]any
}

// loadTabCases reads cases.json with each number typed as Python's json
// types it: int without a fraction or exponent, float with one.
func loadTabCases(t *testing.T) []tabCase {
	t.Helper()
	data, err := os.ReadFile(tabCases)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var cases []tabCase
	if err := dec.Decode(&cases); err != nil {
		t.Fatalf("%s: %v", tabCases, err)
	}
	for _, c := range cases {
		for _, r := range c.Rows {
			for i, v := range r {
				n, ok := v.(json.Number)
				if !ok {
					continue
				}
				if strings.ContainsAny(string(n), ".eE") {
					r[i], err = strconv.ParseFloat(string(n), 64)
				} else {
					r[i], err = strconv.Atoi(string(n))
				}
				if err != nil {
					t.Fatalf("%s: case %q: %v", tabCases, c.Name, err)
				}
			}
		}
	}
	return cases
}

// splitTabGolden splits render.py's output into the tabulate version its
// first line names and the tables by case name, in order.
func splitTabGolden(t *testing.T, text string) (version string, names, tables []string) {
	t.Helper()
	first, body, _ := strings.Cut(text, "\n")
	version, _, ok := strings.Cut(strings.TrimPrefix(first, "# tabulate "), ",")
	if !ok || !strings.HasPrefix(first, "# tabulate ") {
		t.Fatalf("the first line %q does not name the tabulate version", first)
	}
	for _, sec := range strings.Split("\n"+body, "\n=== ")[1:] {
		name, table, _ := strings.Cut(sec, "\n")
		names = append(names, name)
		tables = append(tables, strings.TrimRight(table, "\n")) // a table never ends in a newline
	}
	return version, names, tables
}

func TestGithubTableGolden(t *testing.T) {
	cases := loadTabCases(t)
	data, err := os.ReadFile(tabGolden)
	if err != nil {
		t.Fatal(err)
	}
	version, names, tables := splitTabGolden(t, string(data))
	if len(names) != len(cases) {
		t.Fatalf("%s has %d cases, %s %d: rerun render.py", tabGolden, len(names), tabCases, len(cases))
	}
	for i, c := range cases {
		if names[i] != c.Name {
			t.Fatalf("case %d is %q in %s but %q in %s: rerun render.py", i, names[i], tabGolden, c.Name, tabCases)
		}
		t.Run(c.Name, func(t *testing.T) {
			if got := GithubTable(c.Headers, c.Rows); got != tables[i] {
				t.Errorf("GithubTable differs from tabulate %s:\n--- got\n%s\n--- want\n%s", version, got, tables[i])
			}
		})
	}
}

// The golden is tabulate's own output: render.py, run now, prints the same
// tables. The version line is left out of the comparison (0.8.9, 0.9.0 and
// 0.10.0 print these cases alike) and logged.
func TestGithubTableGoldenIsTabulates(t *testing.T) {
	if err := exec.Command(tabPython, "-c", "import tabulate").Run(); err != nil {
		const how = "apt-get install -y python3-tabulate"
		if tabParityRequired(t) {
			t.Fatalf("%s cannot import tabulate (%v): run `%s`; %s=1 makes this a failure, not a skip", tabPython, err, how, testenv.ParityVar)
		}
		t.Skipf("%s cannot import tabulate (%v): run `%s` to check the golden against it (CI sets %s=1, which makes this a failure)", tabPython, err, how, testenv.ParityVar)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tabPython, tabRender)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tabPython, tabRender, err, stderr.Bytes())
	}
	data, err := os.ReadFile(tabGolden)
	if err != nil {
		t.Fatal(err)
	}
	liveVersion, liveNames, live := splitTabGolden(t, string(out))
	version, names, tables := splitTabGolden(t, string(data))
	t.Logf("golden from tabulate %s, checked against tabulate %s", version, liveVersion)
	if strings.Join(liveNames, "\n") != strings.Join(names, "\n") {
		t.Fatalf("render.py now prints cases %q, %s has %q: rerun render.py", liveNames, tabGolden, names)
	}
	for i, name := range names {
		if live[i] != tables[i] {
			t.Errorf("%s: tabulate %s prints\n%s\nbut %s (tabulate %s) has\n%s", name, liveVersion, live[i], tabGolden, version, tables[i])
		}
	}
}

// tabParityRequired is internal/testenv's rule for BENCHSERVE_PARITY (1:
// a missing reference fails; not a boolean: the test fails), for a
// reference that apt installs rather than npm.
func tabParityRequired(t *testing.T) bool {
	t.Helper()
	v := os.Getenv(testenv.ParityVar)
	if v == "" {
		return false
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		t.Fatalf("%s=%q: want 1 or 0", testenv.ParityVar, v)
	}
	return on
}

// tabulate's doctests for its helpers, and Python's parsing at the edges.
func TestTabulateHelpers(t *testing.T) {
	for _, tt := range []struct {
		s             string
		number, isInt bool
		after         int
	}{
		{"123.45", true, false, 2},
		{"1001", true, true, -1},
		{"eggs", false, false, -1},
		{"123e45", true, false, 2},
		{"123e45678", false, false, -1}, // inf, not spelt inf
		{"inf", true, false, -1},
		{"-INF", true, false, -1},
		{"NaN", true, false, -1},
		{"+inf", false, false, -1},
		{"1.23457e+07", true, false, 9},
		{"1e-05", true, false, 3},
		{" 12 ", true, true, -1},
		{"1_000", true, true, -1},
		{"99999999999999999999", true, true, -1}, // beyond int64
		{"", false, false, -1},
	} {
		if got := tabIsNumber(tt.s); got != tt.number {
			t.Errorf("_isnumber(%q) = %v, want %v", tt.s, got, tt.number)
		}
		if got := tabIsInt(tt.s); got != tt.isInt {
			t.Errorf("_isint(%q) = %v, want %v", tt.s, got, tt.isInt)
		}
		if got := tabAfterPoint(tt.s); got != tt.after {
			t.Errorf("_afterpoint(%q) = %d, want %d", tt.s, got, tt.after)
		}
	}
}

// Any table is a rectangle: a header, a rule of dashes and one line per
// row, every line as long as the rule and framed by "|".
func FuzzGithubTable(f *testing.F) {
	f.Add("3.46", "n/a", 32, 123456.79, "latency (s)", uint8(0))
	f.Add(" 1_0.5 ", "True", -7, 1e-300, "", uint8(5))
	f.Add("inf", "[Profile](/tmp/x)", 0, 12345678.0, "x", uint8(9))
	f.Fuzz(func(t *testing.T, a, b string, n int, x float64, header string, shape uint8) {
		if strings.ContainsAny(a+b+header, "\n\r") || !utf8.ValidString(a+b+header) {
			t.Skip() // tabulate's github format prints newlines as they are
		}
		cells := []any{a, b, n, x, nil}
		rows := [][]any{
			{cells[shape%5], cells[(shape/5)%5], a},
			{n, cells[(shape/25)%5], x},
			{b, x, cells[(shape/125)%5]},
		}
		headers := []string{header, "h", "a longer header"}
		out := GithubTable(headers, rows)
		lines := strings.Split(out, "\n")
		if len(lines) != 2+len(rows) {
			t.Fatalf("%d lines, want %d:\n%s", len(lines), 2+len(rows), out)
		}
		rule := lines[1]
		if strings.Trim(rule, "|-") != "" || strings.Count(rule, "|") != 4 {
			t.Fatalf("rule %q", rule)
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) != utf8.RuneCountInString(rule) {
				t.Fatalf("line %q is not as long as the rule %q:\n%s", l, rule, out)
			}
			if !strings.HasPrefix(l, "|") || !strings.HasSuffix(l, "|") {
				t.Fatalf("line %q is not framed by |", l)
			}
		}
	})
}
