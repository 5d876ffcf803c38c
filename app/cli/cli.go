// Package cli is the benchserve command line: the flags of the reference
// tool's cli_main (spec §9.2), with its names, types, defaults and choices,
// parsed with argparse semantics into a bench.Config. Checks that need the
// server or the dataset are left to package bench.
package cli

import (
	"errors"
	"os"
	"strconv"

	"benchserve/bench"
	"benchserve/dataset"
	"benchserve/internal/py/argparse"
)

const prog = "benchserve"

// UsageError is a bad command line. main prints "benchserve: error: <Msg>"
// (after the usage line, as argparse does) and exits with code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ErrHelp matches a *HelpRequested with errors.Is.
var ErrHelp = errors.New("help requested")

// HelpRequested is returned when -h or --help is given. main prints Text
// to stdout and exits with code 0.
type HelpRequested struct{ Text string }

func (e *HelpRequested) Error() string        { return "help requested" }
func (e *HelpRequested) Is(target error) bool { return target == ErrHelp }

// VersionRequested is returned when --version is given. main prints
// "benchserve <version>" to stdout and exits with code 0.
type VersionRequested struct{}

func (e *VersionRequested) Error() string { return "version requested" }

// Parse parses the arguments after the program name into a Config. Errors
// are *UsageError or *HelpRequested.
func Parse(args []string) (*bench.Config, error) {
	c, _, err := ParseGiven(args)
	return c, err
}

// ParseGiven is Parse that also returns the flags that appeared on the
// command line, by name ("--num-prompts"), whatever their value.
func ParseGiven(args []string) (*bench.Config, map[string]bool, error) {
	return parse(args, processIO().columns())
}

func parse(args []string, cols int) (*bench.Config, map[string]bool, error) {
	ns, err := parseArgs(newParser(), args, cols)
	if err != nil {
		return nil, nil, err
	}
	if ns.Get("version") == true {
		return nil, nil, &VersionRequested{}
	}
	c := new(bench.Config)
	given := map[string]bool{}
	for _, f := range flags {
		f.bind.set(c, ns.Get(dest(f)))
		if ns.Given(dest(f)) {
			given[f.opt.Name] = true
		}
	}
	if err := checkParsed(c); err != nil {
		return nil, nil, err
	}
	return c, given, nil
}

// checkParsed makes the checks the reference makes as it parses the
// flags (generated-shared-prefix's _validate_parsed_gsp_args), for the
// dataset that reads them: the reference makes them whatever the dataset,
// but another dataset ignores the flags, and a note says so
// (docs/compat.md).
func checkParsed(c *bench.Config) error {
	p := c.Params
	p.Name, p.Path = c.DatasetName, c.DatasetPath
	if err := dataset.CheckParsed(p); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	return nil
}

// Defaults returns the Config of a command line with no flags.
func Defaults() *bench.Config {
	c, _, err := parse(nil, 0)
	if err != nil {
		panic("cli: defaults do not parse: " + err.Error())
	}
	return c
}

// Help returns the help text that -h prints.
func Help() string { return newParser().Help(processIO().columns()) }

// Usage returns the usage line(s) argparse prints before an error message.
func Usage() string { return newParser().Usage(processIO().columns()) }

// parseArgs runs p over args: a help request becomes *HelpRequested (its
// text wrapped to cols), a bad command line *UsageError.
func parseArgs(p *argparse.Parser, args []string, cols int) (*argparse.Namespace, error) {
	ns, err := p.Parse(args)
	switch {
	case errors.Is(err, argparse.ErrHelp):
		return nil, &HelpRequested{Text: p.Help(cols)}
	case err != nil:
		return nil, &UsageError{Msg: err.Error()}
	}
	return ns, nil
}

func newParser() *argparse.Parser {
	p := argparse.New(prog, description())
	// Ours; beside -h, where argparse puts a version action. It is not in
	// flags, so the Namespace lines do not show it.
	p.Add(argparse.Option{Name: "--version", Action: argparse.StoreTrue, Help: "show benchserve's version and exit"})
	groups := map[string]*argparse.Group{}
	for _, title := range groupOrder {
		groups[title] = p.Group(title)
	}
	for _, f := range flags {
		groups[f.group].Add(f.opt)
	}
	p.Exclusive("--profile-prefill-url", "--profile-decode-url")
	return p
}

func dest(f flag) string {
	if f.opt.Dest != "" {
		return f.opt.Dest
	}
	return destOf(f.opt.Name)
}

// destOf is argparse's default dest: the name without "--", '-' → '_'.
func destOf(name string) string {
	b := []byte(name[2:])
	for i, c := range b {
		if c == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}

// columns is the terminal width as Python's shutil.get_terminal_size finds
// it: $COLUMNS if a positive number, else the size of the terminal on
// stdout, else 80.
func (pio IO) columns() int {
	if pio.Getenv != nil {
		if n, err := strconv.Atoi(pio.Getenv("COLUMNS")); err == nil && n > 0 {
			return n
		}
	}
	if f, ok := pio.Stdout.(*os.File); ok {
		if n := terminalColumns(f); n > 0 {
			return n
		}
	}
	return 80
}

// processIO is the process's own environment and stdout, for the
// functions below that lay out help without a command's IO (tests').
func processIO() IO { return IO{Getenv: os.Getenv, Stdout: os.Stdout} }
