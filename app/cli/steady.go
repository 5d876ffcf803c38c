package cli

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"benchserve/internal/py/argparse"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
	"benchserve/report/page"
)

// steadyFlags are --steady-state-concurrency-ratio (nil: off) and
// --steady-state-output-file ("": none) of merge and report.
type steadyFlags struct {
	ratio *float64
	file  string
}

// addSteadyFlags adds the two flags to a subcommand's parser; of says
// which records the window is found in.
func addSteadyFlags(p *argparse.Parser, of string) {
	p.Add(argparse.Option{Name: "--steady-state-concurrency-ratio", Type: argparse.Float, Metavar: "R", Help: "As on a run: SGLang's steady-state " +
		"block and our section for " + of + " (0 < R <= 1)."})
	p.Add(argparse.Option{Name: "--steady-state-output-file", Metavar: "PATH", Help: "As on a run: append the steady-state line (SGLang's 15 keys) here."})
}

func steadyOf(ns *argparse.Namespace) steadyFlags {
	var f steadyFlags
	if r, ok := ns.Get("steady_state_concurrency_ratio").(float64); ok {
		f.ratio = &r
	}
	f.file, _ = ns.Get("steady_state_output_file").(string)
	return f
}

// check is the main command's check of the two flags (bench.checkSteady).
func (f steadyFlags) check() error {
	switch {
	case f.ratio != nil && !(*f.ratio > 0 && *f.ratio <= 1):
		return &UsageError{Msg: "--steady-state-concurrency-ratio must be in (0, 1]"}
	case f.ratio == nil && f.file != "":
		return &UsageError{Msg: "--steady-state-output-file: give --steady-state-concurrency-ratio too (the window's share of the peak in flight)"}
	}
	return nil
}

// steadyOfRuns finds each record run's steady state (in dispatch order,
// as the run summed it; a file has the records as they ended), prints
// SGLang's block and our section for it, and appends its line to the
// output file.
func steadyOfRuns(runs []page.RecordSet, f steadyFlags, pio IO) error {
	if f.ratio == nil {
		return nil
	}
	for i := range runs {
		rs := &runs[i]
		recs := slices.Clone(rs.Recs)
		slices.SortStableFunc(recs, func(a, b record.Record) int { return cmp.Compare(a.Seq, b.Seq) })
		st := metrics.ComputeSteady(recs, *f.ratio, nil)
		rs.Steady = &st
		name := filepath.Base(rs.Name)
		if rs.Run != "" {
			name += ", " + rs.Run
		}
		fmt.Fprintf(pio.Stdout, "\nRecords of %s:", name)
		if err := report.SteadyBlock(pio.Stdout, &st); err != nil {
			return err
		}
		if err := report.SteadySection(pio.Stdout, &st); err != nil {
			return err
		}
		if f.file != "" {
			if err := report.Append(f.file, report.SteadyLine(&st)); err != nil {
				return fmt.Errorf("--steady-state-output-file: %v", err)
			}
		}
	}
	return nil
}
