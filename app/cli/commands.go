package cli

import (
	"context"
	"fmt"
	"strings"
)

// command is a benchserve subcommand: its name, what the main help says
// of it, and what runs it with the arguments after its name.
type command struct {
	name string
	// help is a few words; "" describes it together with the next command
	// ("benchserve report" and "benchserve compare" (...)).
	help string
	run  func(ctx context.Context, args []string, pio IO) int
}

// commands gives the dispatch in Main, the list in the main help and the
// one in the unknown-command message, in this order. No command runs a
// benchmark. (Set in init: the commands' own code reaches the help.)
var commands []command

func init() {
	commands = []command{
		{"sweep", "many loads, or the highest load meeting an SLO", SweepMain},
		{"ab", "one plan against two servers, paired", ABMain},
		{"report", "", ReportMain},
		{"compare", "HTML pages and comparisons of results", CompareMain},
		{"merge", "", MergeMain},
		{"k8s-job", "one plan across many clients", K8sJobMain},
		{"one-batch", "one batched request per case", OneBatchMain},
		{"sim", "a simulated inference server", SimMain},
		{"tokenize", "run a tokenizer on stdin", TokenizeMain},
		{"calibrate", "measure this client's own error against the simulator", CalibrateMain},
	}
}

// lookupCommand is the named command's row.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// description is the main help's text: what a run does, the commands, and
// the signals.
func description() string {
	var groups, names []string
	for _, c := range commands {
		names = append(names, `"benchserve `+c.name+`"`)
		if c.help != "" {
			groups = append(groups, strings.Join(names, " and ")+" ("+c.help+")")
			names = nil
		}
	}
	return "Benchmark the online serving throughput. Other commands, each with --help: " +
		strings.Join(groups, ", ") + ". " + signalsHelp
}

// unknownCommand is the message for a first word that names no command.
func unknownCommand(word string) string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return fmt.Sprintf("unknown command %q (commands: %s; no command runs a benchmark)", word, strings.Join(names, ", "))
}
