package cli

import (
	"context"
	"fmt"
	"os"

	"benchserve/internal/py/argparse"
	"benchserve/internal/version"
	"benchserve/report/page"
)

func newCompareParser() *argparse.Parser {
	p := argparse.New("benchserve compare", "Compare two runs figure by figure: A's, B's, the difference and, with both runs' "+
		"record files, whether the difference in latency is beyond the runs' own noise (a bootstrap 95% interval over requests "+
		"resampled whole; \"too few requests\" for a percentile with fewer than 5 requests beyond it, such as the P99 of under 500). "+
		"Each result file's last run line is compared. Usage: benchserve compare A.jsonl B.jsonl [--records RA.jsonl RB.jsonl] [--html FILE.html]")
	p.Add(argparse.Option{Name: "--records", Nargs: argparse.OneOrMore, Metavar: "RECORDS.jsonl", Help: "A's and B's record files (--record-file), in that order."})
	p.Add(argparse.Option{Name: "--html", Metavar: "FILE.html", Help: "Also write the comparison as a page."})
	return p
}

// CompareMain runs "benchserve compare": 0, 1 when a file cannot be read
// or written, 2 for a bad command line.
func CompareMain(_ context.Context, args []string, pio IO) int {
	files, rest := positionals(args)
	ns, err := parseArgs(newCompareParser(), rest, pio.columns())
	if err == nil && len(files) != 2 {
		err = &UsageError{Msg: fmt.Sprintf("give two result files, A and B: benchserve compare A.jsonl B.jsonl [--records RA.jsonl RB.jsonl] [--html FILE.html] (got %d)", len(files))}
	}
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	c := &page.Compared{NameA: files[0], NameB: files[1], Made: "benchserve " + version.String()}
	for _, side := range []struct {
		name string
		line *page.Line
	}{{c.NameA, &c.A}, {c.NameB, &c.B}} {
		lines, err := page.ReadLines(side.name)
		if err != nil {
			return exitCode(failed(err), pio.Stderr)
		}
		found := false
		for i := len(lines) - 1; i >= 0 && !found; i-- {
			if lines[i].Has("completed") {
				*side.line, found = lines[i], true
			}
		}
		if !found {
			return exitCode(failed(fmt.Errorf("%s: no run line (one with \"completed\")", side.name)), pio.Stderr)
		}
	}
	if recs := strList(ns.Get("records")); len(recs) > 0 {
		if len(recs) != 2 {
			return exitCode(&UsageError{Msg: fmt.Sprintf("argument --records: give A's and B's record files, 2 in all, got %d", len(recs))}, pio.Stderr)
		}
		if c.RA, err = page.ReadRecords(recs[0]); err != nil {
			return exitCode(failed(err), pio.Stderr)
		}
		if c.RB, err = page.ReadRecords(recs[1]); err != nil {
			return exitCode(failed(err), pio.Stderr)
		}
	}
	rows := page.Rows(c)
	if err := page.Text(pio.Stdout, c, rows); err != nil {
		return exitCode(failed(err), pio.Stderr)
	}
	if h, ok := ns.Get("html").(string); ok {
		if err := os.WriteFile(h, page.ComparePage(c, rows), 0o644); err != nil {
			return exitCode(failed(fmt.Errorf("--html: %v", err)), pio.Stderr)
		}
		fmt.Fprintf(pio.Stdout, "Wrote %s.\n", h)
	}
	return 0
}
