// Package argparse parses long command-line options with the semantics of
// Python's argparse (CPython 3.11), so that a Go port of a Python tool
// accepts the same command lines and rejects bad ones with the same messages:
// unambiguous prefixes, --opt=value, nargs "+" and "*", negative numbers as
// values, "--", last-one-wins repeats, mutually exclusive options.
//
// Options are long flags ("--x-y") plus -h/--help; there are no positional
// arguments. Errors come back as *Error carrying the one-line message that
// argparse prints after "prog: error: "; -h gives ErrHelp. Nothing here
// prints or exits.
package argparse

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Action says what an option does with its values.
type Action int

const (
	// Store keeps the converted value (a list for nargs "+" and "*").
	Store Action = iota
	// StoreTrue takes no value and stores true; the default is false.
	StoreTrue
	// Append takes one value each time the option is given and stores
	// them all as a list (action="append"); the default is None.
	Append
	actionHelp
)

// Nargs is how many values an option takes.
type Nargs int

const (
	// One value (argparse's nargs=None).
	One Nargs = iota
	// OneOrMore values, stored as a list (nargs="+").
	OneOrMore
	// ZeroOrMore values, stored as a list (nargs="*").
	ZeroOrMore
)

// Option describes one option, as the arguments of add_argument do.
type Option struct {
	Name    string   // "--num-prompts"
	Aliases []string // further option strings, as add_argument("--model-path", "--model"); "-x" is a short one
	Dest    string   // default: Name without dashes, '-' → '_'
	Action  Action   // Store, StoreTrue or Append
	Type    Type     // zero value: Str
	Nargs   Nargs    // One, OneOrMore or ZeroOrMore
	Choices []string // allowed values of a string option (each item of a list)
	// Default is the value when the option is not given, already converted:
	// nil (Python's None), string, int, float64, bool, or []any for lists.
	Default any
	Metavar string // default: {choice,...} with Choices, else UPPER_SNAKE of Dest
	Help    string
}

// Error is a command-line error. Msg is the text argparse prints after
// "prog: error: ".
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// ErrHelp is returned by Parse when -h or --help is reached.
var ErrHelp = errors.New("argparse: help requested")

type opt struct {
	Option
	names []string // option strings: "--x", or "-h", "--help"
	group *Group
	excl  *[]*opt // the mutually exclusive set this option is in, if any
}

// name is how argparse names the option in messages: "-h/--help".
func (o *opt) name() string { return strings.Join(o.names, "/") }

func (o *opt) errorf(format string, args ...any) error {
	return &Error{Msg: "argument " + o.name() + ": " + fmt.Sprintf(format, args...)}
}

// Group is a titled section of the help text.
type Group struct {
	Title string
	p     *Parser
	opts  []*opt
}

// Parser holds the options of one program.
type Parser struct {
	Prog        string
	Description string

	opts    []*opt          // declaration order, help first
	byName  map[string]*opt // option string → option
	order   []string        // option strings in declaration order
	groups  []*Group
	negLike bool // some option string looks like a negative number
	excls   []*[]*opt
}

// New returns a parser with -h/--help in a first group titled "options",
// as Python's ArgumentParser has.
func New(prog, description string) *Parser {
	p := &Parser{Prog: prog, Description: description, byName: map[string]*opt{}}
	g := p.Group("options")
	g.add(&opt{
		Option: Option{Dest: "help", Action: actionHelp, Help: "show this help message and exit"},
		names:  []string{"-h", "--help"},
	})
	return p
}

// Group adds a help section; options added to it are listed under Title.
func (p *Parser) Group(title string) *Group {
	g := &Group{Title: title, p: p}
	p.groups = append(p.groups, g)
	return g
}

// Add adds an option to the first group ("options").
func (p *Parser) Add(o Option) { p.groups[0].Add(o) }

// Add adds an option to the group. It panics on a malformed or repeated
// option name: that is a programming error, not bad input.
func (g *Group) Add(o Option) {
	if !strings.HasPrefix(o.Name, "--") || len(o.Name) < 3 {
		panic("argparse: option name must be --long: " + o.Name)
	}
	if o.Dest == "" {
		o.Dest = strings.ReplaceAll(o.Name[2:], "-", "_")
	}
	if o.Type.Convert == nil {
		o.Type = Str
	}
	if o.Action == StoreTrue && o.Default == nil {
		o.Default = false
	}
	for _, a := range o.Aliases {
		short := len(a) == 2 && a[0] == '-' && a[1] != '-'
		if !short && (!strings.HasPrefix(a, "--") || len(a) < 3) {
			panic("argparse: option alias must be --long or -x: " + a)
		}
	}
	g.add(&opt{Option: o, names: append([]string{o.Name}, o.Aliases...)})
}

func (g *Group) add(o *opt) {
	p := g.p
	for _, n := range o.names {
		if _, dup := p.byName[n]; dup {
			panic("argparse: option defined twice: " + n)
		}
		p.byName[n] = o
		p.order = append(p.order, n)
		if isNegativeNumber(n) {
			p.negLike = true
		}
	}
	o.group = g
	g.opts = append(g.opts, o)
	p.opts = append(p.opts, o)
}

// Exclusive makes the named options mutually exclusive, as
// add_mutually_exclusive_group does. It panics on an unknown name.
func (p *Parser) Exclusive(names ...string) {
	set := new([]*opt)
	for _, n := range names {
		o, ok := p.byName[n]
		if !ok {
			panic("argparse: unknown option " + n)
		}
		o.excl = set
		*set = append(*set, o)
	}
	p.excls = append(p.excls, set)
}

// Namespace is the result of Parse: every option's value, given or default.
type Namespace struct {
	dests  []string
	values map[string]any
	given  map[string]bool
}

// Get returns the value stored under dest: nil (None), string, int,
// float64, bool, or []any for nargs "+" and "*".
func (n *Namespace) Get(dest string) any { return n.values[dest] }

// Given reports whether the option stored under dest appeared on the
// command line, whatever its value.
func (n *Namespace) Given(dest string) bool { return n.given[dest] }

// Dests returns the destinations in declaration order.
func (n *Namespace) Dests() []string { return n.dests }

// String returns Python's repr of the argparse Namespace.
func (n *Namespace) String() string {
	var b strings.Builder
	b.WriteString("Namespace(")
	for i, d := range n.dests {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d)
		b.WriteByte('=')
		b.WriteString(ReprValue(n.values[d]))
	}
	b.WriteByte(')')
	return b.String()
}

// match is what one command-line string was recognised as.
type match struct {
	o        *opt // nil: looks like an option, but none matches
	name     string
	explicit *string // the text after "=" (or after a short flag)
}

// Parse parses args (without the program name). It returns *Error for a bad
// command line and ErrHelp when -h/--help is reached before any error.
func (p *Parser) Parse(args []string) (*Namespace, error) {
	ns := &Namespace{values: map[string]any{}, given: map[string]bool{}}
	for _, o := range p.opts {
		if o.Action == actionHelp {
			continue
		}
		ns.dests = append(ns.dests, o.Dest)
		v := o.Default
		if l, ok := v.([]any); ok {
			v = append([]any(nil), l...) // each result owns its lists
		}
		ns.values[o.Dest] = v
	}

	// As argparse, classify every string first ('O' option, 'A' value,
	// '-' the "--" marker): an ambiguous prefix fails before anything else.
	pattern := make([]byte, len(args))
	matches := make([]match, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			pattern[i] = '-'
			for i++; i < len(args); i++ {
				pattern[i] = 'A'
			}
			break
		}
		m, isOpt, err := p.classify(args[i])
		if err != nil {
			return nil, err
		}
		if isOpt {
			pattern[i], matches[i] = 'O', m
		} else {
			pattern[i] = 'A'
		}
	}

	st := &state{p: p, ns: ns, args: args, pattern: pattern, nonDefault: map[*opt]bool{}}
	var extras []string
	for i := 0; i < len(args); {
		if pattern[i] != 'O' || matches[i].o == nil {
			// a value no option took, or an unknown option
			extras = append(extras, args[i])
			i++
			continue
		}
		next, err := st.consume(i, matches[i])
		if err != nil {
			return nil, err
		}
		i = next
	}
	if len(extras) > 0 {
		return nil, &Error{Msg: "unrecognized arguments: " + strings.Join(extras, " ")}
	}
	return ns, nil
}

// classify mirrors argparse's _parse_optional.
func (p *Parser) classify(a string) (match, bool, error) {
	if a == "" || a[0] != '-' {
		return match{}, false, nil
	}
	if o, ok := p.byName[a]; ok {
		return match{o: o, name: a}, true, nil
	}
	if a == "-" {
		return match{}, false, nil
	}
	if name, val, ok := strings.Cut(a, "="); ok {
		if o, ok := p.byName[name]; ok {
			return match{o: o, name: name, explicit: &val}, true, nil
		}
	}
	ms := p.prefixMatches(a)
	if len(ms) > 1 {
		names := make([]string, len(ms))
		for i, m := range ms {
			names[i] = m.name
		}
		return match{}, false, &Error{Msg: "ambiguous option: " + a + " could match " + strings.Join(names, ", ")}
	}
	if len(ms) == 1 {
		return ms[0], true, nil
	}
	if isNegativeNumber(a) && !p.negLike {
		return match{}, false, nil
	}
	if strings.Contains(a, " ") {
		return match{}, false, nil
	}
	return match{name: a}, true, nil
}

// prefixMatches mirrors argparse's _get_option_tuples with allow_abbrev:
// "--pre[=v]" matches every option string starting with "--pre"; "-xrest"
// matches the short option "-x" (rest as its argument) and every option
// string starting with "-xrest".
func (p *Parser) prefixMatches(a string) []match {
	var ms []match
	if a[1] == '-' {
		prefix, val, hasVal := strings.Cut(a, "=")
		for _, n := range p.order {
			if strings.HasPrefix(n, prefix) {
				m := match{o: p.byName[n], name: n}
				if hasVal {
					m.explicit = &val
				}
				ms = append(ms, m)
			}
		}
		return ms
	}
	_, size := utf8.DecodeRuneInString(a[1:])
	short, rest := a[:1+size], a[1+size:]
	for _, n := range p.order {
		switch {
		case n == short:
			r := rest
			ms = append(ms, match{o: p.byName[n], name: n, explicit: &r})
		case strings.HasPrefix(n, a):
			ms = append(ms, match{o: p.byName[n], name: n})
		}
	}
	return ms
}

// isNegativeNumber is argparse's _negative_number_matcher,
// ^-\d+$|^-\d*\.\d+$, where \d is any Unicode digit and $ also matches
// before a final newline.
func isNegativeNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	s = strings.TrimSuffix(s[1:], "\n")
	intPart, frac, dot := strings.Cut(s, ".")
	if !allDigits(intPart) || !allDigits(frac) {
		return false
	}
	if dot {
		return frac != ""
	}
	return intPart != ""
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// takesValues reports whether the option is followed by values.
func (o *opt) takesValues() bool { return o.Action == Store || o.Action == Append }
