package argparse

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"benchserve/internal/py/pyfmt"
)

// finitePositive is the reference tool's _finite_positive_float.
func finitePositive(s string) (any, error) {
	f, err := pyfmt.ParseFloat(s)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f <= 0 {
		return nil, &ArgumentTypeError{Msg: "expected a finite float > 0, got " + Repr(s)}
	}
	return f, nil
}

// testParser mirrors the Python parser in the comment above parseCases.
func testParser() *Parser {
	p := New("prog", "A test program.")
	p.Add(Option{Name: "--random-input-len", Type: Int, Default: 1024})
	p.Add(Option{Name: "--random-output-len", Type: Int, Default: 1024})
	p.Add(Option{Name: "--num-prompts", Type: Int, Default: 1000})
	p.Add(Option{Name: "--rate", Type: Float, Default: math.Inf(1)})
	p.Add(Option{Name: "--name"})
	p.Add(Option{Name: "--mode", Choices: []string{"a", "b"}, Default: "a"})
	p.Add(Option{Name: "--flag", Action: StoreTrue})
	p.Add(Option{Name: "--items", Nargs: OneOrMore})
	p.Add(Option{Name: "--ids", Type: Int, Nargs: OneOrMore})
	p.Add(Option{Name: "--opt-list", Nargs: ZeroOrMore})
	p.Add(Option{Name: "--alpha", Type: Type{Name: "finitePositive", Convert: finitePositive}})
	p.Add(Option{Name: "--left", Nargs: ZeroOrMore})
	p.Add(Option{Name: "--right", Nargs: ZeroOrMore})
	p.Exclusive("--left", "--right")
	return p
}

// parseCases: each command line with what CPython 3.11.7 gives for it: the
// repr of the Namespace, the message argparse passes to error(), or HELP.
// Produced by running every command line through this Python parser
// (error() and print_help() overridden to raise) and printing the result:
//
//	p = argparse.ArgumentParser(prog='prog')
//	p.add_argument('--random-input-len', type=int, default=1024)
//	p.add_argument('--random-output-len', type=int, default=1024)
//	p.add_argument('--num-prompts', type=int, default=1000)
//	p.add_argument('--rate', type=float, default=float('inf'))
//	p.add_argument('--name', type=str)
//	p.add_argument('--mode', choices=['a', 'b'], default='a')
//	p.add_argument('--flag', action='store_true')
//	p.add_argument('--items', nargs='+')
//	p.add_argument('--ids', type=int, nargs='+')
//	p.add_argument('--opt-list', nargs='*')
//	p.add_argument('--alpha', type=_finite_positive_float)
//	g = p.add_mutually_exclusive_group()
//	g.add_argument('--left', nargs='*')
//	g.add_argument('--right', nargs='*')
var parseCases = []struct {
	args []string
	want string
}{
	{nil, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--random-input", "5"}, "Namespace(random_input_len=5, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--random-input=5"}, "Namespace(random_input_len=5, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--random", "5"}, "ambiguous option: --random could match --random-input-len, --random-output-len"},
	{[]string{"--random=5"}, "ambiguous option: --random=5 could match --random-input-len, --random-output-len"},
	{[]string{"--num", "7", "--num-prompts", "8"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=8, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--num-prompts=-3"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=-3, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--num-prompts", "-3"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=-3, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--num-prompts", " 1_000 "}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--num-prompts", "1__0"}, "argument --num-prompts: invalid int value: '1__0'"},
	{[]string{"--num-prompts", "1.5"}, "argument --num-prompts: invalid int value: '1.5'"},
	{[]string{"--num-prompts", "abc"}, "argument --num-prompts: invalid int value: 'abc'"},
	{[]string{"--num-prompts", ""}, "argument --num-prompts: invalid int value: ''"},
	{[]string{"--num-prompts="}, "argument --num-prompts: invalid int value: ''"},
	{[]string{"--num-prompts"}, "argument --num-prompts: expected one argument"},
	{[]string{"--num-prompts", "-x"}, "argument --num-prompts: expected one argument"},
	{[]string{"--num-prompts", "--flag"}, "argument --num-prompts: expected one argument"},
	{[]string{"--rate", "-.5"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=-0.5, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--rate", "-1e3"}, "argument --rate: expected one argument"},
	{[]string{"--rate", "1e3"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=1000.0, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--rate", "-inf"}, "argument --rate: expected one argument"},
	{[]string{"--rate=-inf"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=-inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--rate", "InFiNiTy"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--rate", "nan"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=nan, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--rate", "1_0.5"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=10.5, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--rate", "x"}, "argument --rate: invalid float value: 'x'"},
	{[]string{"--name", "it's"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=\"it's\", mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name", "say \"hi\""}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='say \"hi\"', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name", "both ' and \""}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='both \\' and \"', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name", "tab\there\nnl\\"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='tab\\there\\nnl\\\\', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name", "\u00e9\u4e2d\u00a0\u200b"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='\u00e9\u4e2d\\xa0\\u200b', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name", "-5 x"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='-5 x', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name", "-"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='-', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name", ""}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name=--flag"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='--flag', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--name", "a", "--name", "b"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='b', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--mode", "c"}, "argument --mode: invalid choice: 'c' (choose from 'a', 'b')"},
	{[]string{"--mode", "b"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='b', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--flag"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=True, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--flag=1"}, "argument --flag: ignored explicit argument '1'"},
	{[]string{"--flag="}, "argument --flag: ignored explicit argument ''"},
	{[]string{"--fl"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=True, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--f"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=True, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--items"}, "argument --items: expected at least one argument"},
	{[]string{"--items", "a", "b", "--flag", "c"}, "unrecognized arguments: c"},
	{[]string{"--items=x", "y"}, "unrecognized arguments: y"},
	{[]string{"--ids", "1", "-2", "3"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=[1, -2, 3], opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--ids", "1", "x"}, "argument --ids: invalid int value: 'x'"},
	{[]string{"--opt-list"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=[], alpha=None, left=None, right=None)"},
	{[]string{"--opt-list", "--flag"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=True, items=None, ids=None, opt_list=[], alpha=None, left=None, right=None)"},
	{[]string{"--opt-list", "a", "--", "b"}, "unrecognized arguments: -- b"},
	{[]string{"--", "x"}, "unrecognized arguments: -- x"},
	{[]string{"--"}, "unrecognized arguments: --"},
	{[]string{"x"}, "unrecognized arguments: x"},
	{[]string{"--unknown", "v", "--flag", "w"}, "unrecognized arguments: --unknown v w"},
	{[]string{"--unknown=v"}, "unrecognized arguments: --unknown=v"},
	{[]string{"-x"}, "unrecognized arguments: -x"},
	{[]string{"-5"}, "unrecognized arguments: -5"},
	{[]string{"-"}, "unrecognized arguments: -"},
	{[]string{""}, "unrecognized arguments: "},
	{[]string{"-h"}, "HELP"},
	{[]string{"--help"}, "HELP"},
	{[]string{"--he"}, "HELP"},
	{[]string{"-hx"}, "argument -h/--help: ignored explicit argument 'x'"},
	{[]string{"-h=1"}, "argument -h/--help: ignored explicit argument '1'"},
	{[]string{"--num-prompts", "abc", "-h"}, "argument --num-prompts: invalid int value: 'abc'"},
	{[]string{"-h", "--num-prompts", "abc"}, "HELP"},
	{[]string{"--unknown", "-h"}, "HELP"},
	{[]string{"--num-prompts", "abc", "--random", "1"}, "ambiguous option: --random could match --random-input-len, --random-output-len"},
	{[]string{"--alpha", "0"}, "argument --alpha: expected a finite float > 0, got '0'"},
	{[]string{"--alpha", "-1"}, "argument --alpha: expected a finite float > 0, got '-1'"},
	{[]string{"--alpha", "inf"}, "argument --alpha: expected a finite float > 0, got 'inf'"},
	{[]string{"--alpha", "x"}, "argument --alpha: expected a finite float > 0, got 'x'"},
	{[]string{"--alpha", "0.5"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=0.5, left=None, right=None)"},
	{[]string{"--left", "a", "--right", "b"}, "argument --right: not allowed with argument --left"},
	{[]string{"--right", "--left"}, "argument --left: not allowed with argument --right"},
	{[]string{"--left", "a", "--left", "b"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=['b'], right=None)"},
	{[]string{"--l", "a"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=['a'], right=None)"},
	{[]string{"--=x"}, "ambiguous option: --=x could match --help, --random-input-len, --random-output-len, --num-prompts, --rate, --name, --mode, --flag, --items, --ids, --opt-list, --alpha, --left, --right"},
	{[]string{"--num-prompts", "5", "--num-prompts", "x"}, "argument --num-prompts: invalid int value: 'x'"},
	{[]string{"--name", "a b"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=1000, rate=inf, name='a b', mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"-5\n"}, "unrecognized arguments: -5\n"},
	{[]string{"--num-prompts", "-5\n"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=-5, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"--num-prompts", "\u0663"}, "Namespace(random_input_len=1024, random_output_len=1024, num_prompts=3, rate=inf, name=None, mode='a', flag=False, items=None, ids=None, opt_list=None, alpha=None, left=None, right=None)"},
	{[]string{"-hh"}, "HELP"},
	{[]string{"-hhx"}, "argument -h/--help: ignored explicit argument 'x'"},
	{[]string{"-hh=x"}, "argument -h/--help: ignored explicit argument '=x'"},
	{[]string{"-h", "x"}, "HELP"},
	{[]string{"-5", "--flag"}, "unrecognized arguments: -5"},
	{[]string{"--items", "-5", "-.5", "-1."}, "unrecognized arguments: -1."},
}

func TestParseMatchesPython(t *testing.T) {
	for _, c := range parseCases {
		ns, err := testParser().Parse(c.args)
		var got string
		var perr *Error
		switch {
		case err == nil:
			got = ns.String()
		case errors.Is(err, ErrHelp):
			got = "HELP"
		case errors.As(err, &perr):
			got = perr.Msg
		default:
			got = fmt.Sprintf("unexpected error type %T: %v", err, err)
		}
		if got != c.want {
			t.Errorf("Parse(%q)\n got %s\nwant %s", c.args, got, c.want)
		}
	}
}

func TestGivenAndDests(t *testing.T) {
	ns, err := testParser().Parse([]string{"--num-prompts", "1000", "--fl", "--opt-list"})
	if err != nil {
		t.Fatal(err)
	}
	for dest, want := range map[string]bool{"num_prompts": true, "flag": true, "opt_list": true, "rate": false, "name": false} {
		if got := ns.Given(dest); got != want {
			t.Errorf("Given(%q) = %v, want %v", dest, got, want)
		}
	}
	want := "random_input_len random_output_len num_prompts rate name mode flag items ids opt_list alpha left right"
	if got := strings.Join(ns.Dests(), " "); got != want {
		t.Errorf("Dests() = %s, want %s", got, want)
	}
	if got, ok := ns.Get("opt_list").([]any); !ok || got == nil || len(got) != 0 {
		t.Errorf("Get(opt_list) = %#v, want an empty non-nil list", ns.Get("opt_list"))
	}
}

// Python turns "--name=--" into an empty list (it drops "--" from every
// option's values); we keep "--" as the value. A documented deviation.
func TestExplicitDoubleDashIsLiteral(t *testing.T) {
	ns, err := testParser().Parse([]string{"--name=--", "--items=--"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.Get("name"); got != "--" {
		t.Errorf("name = %#v, want \"--\"", got)
	}
	if got := ReprValue(ns.Get("items")); got != "['--']" {
		t.Errorf("items = %s, want ['--']", got)
	}
}

func TestDefinitionErrorsPanic(t *testing.T) {
	for _, f := range []func(p *Parser){
		func(p *Parser) { p.Add(Option{Name: "--name"}) },
		func(p *Parser) { p.Add(Option{Name: "-n"}) },
		func(p *Parser) { p.Add(Option{Name: "--nn", Aliases: []string{"-nn"}}) },
		func(p *Parser) { p.Exclusive("--nope") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f(testParser())
		}()
	}
}

// FuzzParse: any command line gives a namespace, ErrHelp or a one-line
// *Error, never a panic.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add(strings.Join(c.args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		ns, err := testParser().Parse(args)
		var perr *Error
		switch {
		case err == nil:
			if len(ns.Dests()) != 13 {
				t.Fatalf("%d dests", len(ns.Dests()))
			}
		case errors.Is(err, ErrHelp):
		case errors.As(err, &perr):
			if strings.Contains(perr.Msg, "\n") && !strings.Contains(joined, "\n") {
				t.Fatalf("multi-line message %q", perr.Msg)
			}
		default:
			t.Fatalf("error of type %T: %v", err, err)
		}
	})
}

// A short alias takes its value as the next argument, attached, or after
// '=', as add_argument("-o", "--output") does in Python.
func TestShortAlias(t *testing.T) {
	p := New("prog", "")
	p.Add(Option{Name: "--output", Aliases: []string{"-o"}, Choices: []string{"json", "yaml"}, Default: "json"})
	for _, args := range [][]string{{"-o", "yaml"}, {"-oyaml"}, {"-o=yaml"}, {"--output", "yaml"}, {"--out=yaml"}} {
		ns, err := p.Parse(args)
		if err != nil || ns.Get("output") != "yaml" {
			t.Errorf("%q: %v %v", args, ns, err)
		}
	}
	_, err := p.Parse([]string{"-o", "xml"})
	if err == nil || err.Error() != "argument --output/-o: invalid choice: 'xml' (choose from 'json', 'yaml')" {
		t.Errorf("-o xml: %v", err)
	}
}

func TestDefaultListNotShared(t *testing.T) {
	p := New("prog", "")
	p.Add(Option{Name: "--acts", Nargs: OneOrMore, Default: []any{"CPU", "GPU"}})
	a, _ := p.Parse(nil)
	a.Get("acts").([]any)[0] = "MEM"
	b, _ := p.Parse(nil)
	if got := ReprValue(b.Get("acts")); got != "['CPU', 'GPU']" {
		t.Errorf("second parse default = %s", got)
	}
}

// action="append", against CPython 3.11.7's output for the same parser:
//
//	p.add_argument('--threshold', action='append')
//	p.add_argument('--n', type=int, action='append')
//	p.add_argument('--flag', action='store_true')
func TestAppend(t *testing.T) {
	mk := func() *Parser {
		p := New("prog", "")
		p.Add(Option{Name: "--threshold", Action: Append})
		p.Add(Option{Name: "--n", Type: Int, Action: Append})
		p.Add(Option{Name: "--flag", Action: StoreTrue})
		return p
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "Namespace(threshold=None, n=None, flag=False)"},
		{[]string{"--threshold", "a<1"}, "Namespace(threshold=['a<1'], n=None, flag=False)"},
		{[]string{"--threshold", "a<1", "--threshold=b>2"}, "Namespace(threshold=['a<1', 'b>2'], n=None, flag=False)"},
		{[]string{"--thr", "x", "--flag", "--threshold", "y"}, "Namespace(threshold=['x', 'y'], n=None, flag=True)"},
		{[]string{"--n", "1", "--n", "2"}, "Namespace(threshold=None, n=[1, 2], flag=False)"},
		{[]string{"--n", "x"}, "argument --n: invalid int value: 'x'"},
		{[]string{"--threshold"}, "argument --threshold: expected one argument"},
	} {
		ns, err := mk().Parse(c.args)
		got := ""
		var perr *Error
		switch {
		case err == nil:
			got = ns.String()
		case errors.As(err, &perr):
			got = perr.Msg
		default:
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Parse(%q)\n got %s\nwant %s", c.args, got, c.want)
		}
	}
	if got, want := mk().Usage(80), "usage: prog [-h] [--threshold THRESHOLD] [--n N] [--flag]\n"; got != want {
		t.Errorf("usage %q, want %q", got, want)
	}
}
