package argparse

import (
	"math"
	"os"
	"strings"
	"testing"
)

// helpParser mirrors testdata/help.py.
func helpParser() *Parser {
	p := New("prog", "A test program that does things with several options, described at some length here so that it wraps.")
	t := p.Group("Target")
	t.Add(Option{Name: "--backend", Choices: []string{"alpha", "beta", "gamma"}, Default: "alpha", Help: "Which backend to use."})
	t.Add(Option{Name: "--base-url", Help: "Server URL if not using host and port."})
	d := p.Group("Dataset")
	d.Add(Option{Name: "--num-prompts", Type: Int, Default: 1000, Help: "Number of prompts to process, a fairly long sentence that must wrap over lines."})
	d.Add(Option{Name: "--flag", Action: StoreTrue, Help: "A switch."})
	d.Add(Option{Name: "--header", Nargs: OneOrMore, Help: "Custom HTTP headers in Key=Value format."})
	d.Add(Option{Name: "--lora-name", Nargs: ZeroOrMore})
	d.Add(Option{Name: "--extra-request-body", Metavar: `{"key1": "value1"}`, Help: "JSON object."})
	d.Add(Option{Name: "--rate", Type: Float, Default: math.Inf(1), Help: "Requests per second."})
	p.Add(Option{Name: "--left", Nargs: ZeroOrMore, Help: "Left URLs."})
	p.Add(Option{Name: "--right", Nargs: ZeroOrMore, Help: "Right URLs."})
	p.Exclusive("--left", "--right")
	p.Add(Option{Name: "--profile-activities", Nargs: OneOrMore, Choices: []string{"CPU", "GPU"}, Default: []any{"CPU", "GPU"}, Help: "Activities."})
	return p
}

// The expected texts are Python's format_help() and format_usage() for the
// same parser (with the defaults written into its help strings), separated
// by a "=====" line; see testdata/help.py.
func TestHelpMatchesPython(t *testing.T) {
	for _, cols := range []string{"50", "80", "120"} {
		raw, err := os.ReadFile("testdata/help_" + cols + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		wantHelp, wantUsage, _ := strings.Cut(string(raw), "=====\n")
		n := map[string]int{"50": 50, "80": 80, "120": 120}[cols]
		p := helpParser()
		if got := p.Help(n); got != wantHelp {
			t.Errorf("Help(%d):\n%s\nwant:\n%s", n, got, wantHelp)
		}
		if got := p.Usage(n); got != wantUsage {
			t.Errorf("Usage(%d):\n%s\nwant:\n%s", n, got, wantUsage)
		}
	}
}

func TestHelpDefaultColumns(t *testing.T) {
	p := helpParser()
	if p.Help(0) != p.Help(80) {
		t.Error("Help(0) differs from Help(80)")
	}
}

// A program name too long for the usage line puts the options under it.
func TestUsageLongProg(t *testing.T) {
	p := New(strings.Repeat("p", 40), "")
	p.Add(Option{Name: "--alpha-option"})
	p.Add(Option{Name: "--beta-option"})
	want := "usage: " + strings.Repeat("p", 40) + "\n       [-h] [--alpha-option ALPHA_OPTION]\n       [--beta-option BETA_OPTION]\n"
	if got := p.Usage(50); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
