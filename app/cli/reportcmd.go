package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"benchserve/internal/exit"
	"benchserve/internal/py/argparse"
	"benchserve/internal/version"
	"benchserve/report/page"
)

func newReportParser() *argparse.Parser {
	p := argparse.New("benchserve report", "Write one self-contained HTML page (no network needed to view it) from result files "+
		"(--output-file lines: runs, sweeps, searches) and record files (--record-file): the runs' figures, the load "+
		"curves of several runs, and each record file's distributions and time series; with --steady-state-concurrency-ratio, each "+
		"record run's steady state too (printed, and shaded on the page). Usage: benchserve report FILE.jsonl... "+
		"[--records RECORDS.jsonl...] [-o report.html]")
	p.Add(argparse.Option{Name: "--records", Nargs: argparse.OneOrMore, Metavar: "RECORDS.jsonl", Help: "Record files (a file of several runs, such as a sweep's, gives each run its own section)."})
	p.Add(argparse.Option{Name: "--server-metrics", Nargs: argparse.OneOrMore, Metavar: "SERVER.jsonl", Help: "Files of the server's metrics over a run (--server-metrics-file)."})
	p.Add(argparse.Option{Name: "--output", Default: "report.html", Metavar: "FILE.html", Help: "The page to write (also -o)."})
	addSteadyFlags(p, "each run of the --records files")
	return p
}

// ReportMain runs "benchserve report": 0, 1 when a file cannot be read or
// written, 2 for a bad command line.
func ReportMain(_ context.Context, args []string, pio IO) int {
	files, rest := positionals(args)
	ns, err := parseArgs(newReportParser(), rest, pio.columns())
	if err == nil && len(files) == 0 {
		err = &UsageError{Msg: "give at least one result file: benchserve report FILE.jsonl... [--records RECORDS.jsonl...] [-o report.html]"}
	}
	if err == nil {
		err = steadyOf(ns).check()
	}
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	in := page.Input{Made: "benchserve " + version.String()}
	for _, f := range files {
		lines, err := page.ReadLines(f)
		if err != nil {
			return exitCode(failed(err), pio.Stderr)
		}
		in.Lines = append(in.Lines, lines...)
	}
	for _, f := range strList(ns.Get("records")) {
		runs, err := page.ReadRecordRuns(f)
		if err != nil {
			return exitCode(failed(err), pio.Stderr)
		}
		page.Label(runs, in.Lines)
		in.Records = append(in.Records, runs...)
	}
	if err := steadyOfRuns(in.Records, steadyOf(ns), pio); err != nil {
		return exitCode(failed(err), pio.Stderr)
	}
	for _, f := range strList(ns.Get("server_metrics")) {
		s, err := page.ReadServerSeries(f)
		if err != nil {
			return exitCode(failed(err), pio.Stderr)
		}
		in.Server = append(in.Server, s)
	}
	out := ns.Get("output").(string)
	if err := os.WriteFile(out, page.Report(in), 0o644); err != nil {
		return exitCode(failed(fmt.Errorf("-o: %v", err)), pio.Stderr)
	}
	fmt.Fprintf(pio.Stdout, "Wrote %s (%d result lines, %d runs' records, %d server metric files).\n", out, len(in.Lines), len(in.Records), len(in.Server))
	return 0
}

// positionals splits off the file names that come before the first flag
// (the flag parser takes options only), and spells -o as --output.
func positionals(args []string) (files, rest []string) {
	return positionalsWith(args, nil)
}

// positionalsWith also takes the file names after the flags, where the
// flags are ones (valued) that take exactly one value.
func positionalsWith(args []string, valued map[string]bool) (files, rest []string) {
	i := 0
	for i < len(args) && (args[i] == "-" || !strings.HasPrefix(args[i], "-")) {
		i++
	}
	files = args[:i]
	if valued != nil {
		var tail []string
		for k := i; k < len(args); k++ {
			a := args[k]
			switch {
			case valued[a] && k+1 < len(args):
				tail = append(tail, a, args[k+1])
				k++
			case strings.HasPrefix(a, "-"):
				tail = append(tail, a)
			default:
				files = append(files, a)
			}
		}
		return files, tail
	}
	for _, a := range args[i:] {
		switch {
		case a == "-o":
			a = "--output"
		case strings.HasPrefix(a, "-o="):
			a = "--output=" + a[3:]
		}
		rest = append(rest, a)
	}
	return files, rest
}

func failed(err error) error { return &exit.Error{Code: exit.Failure, Msg: err.Error()} }

func strList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}
