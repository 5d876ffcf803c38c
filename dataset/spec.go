package dataset

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"benchserve/internal/py/argparse"
)

// Spec is one --dataset-name: how its rows are built and what the rest of
// the program asks of it. Nothing outside this package names a dataset;
// it asks its Spec.
type Spec struct {
	Name string
	// Load builds the rows. Load (the function) has already refused a
	// negative --num-prompts and, with RefusesIDs, --tokenize-prompt.
	Load func(ctx context.Context, p Params, env Env) ([]Row, error)
	// Parsed makes the checks the reference makes as it parses the flags
	// (nil: none); the command line refuses the flags at once.
	Parsed func(p Params) error
	// Preflight makes the loader's checks that need neither a tokenizer,
	// a file nor the network, with its messages (nil: none).
	Preflight func(p Params) error
	// CheckFile reads --dataset-path and makes the checks that need no
	// tokenizer, so that a bad line is named before the run waits for a
	// server (nil: the file is only opened).
	CheckFile func(ctx context.Context, p Params) error
	// Flags are its own flags, declared in its file; the command line
	// adds them (at the end unless it places them).
	Flags []Flag
	// Reads are the shared flags it reads (shared, below); a given one it
	// does not read is noted as having no effect.
	Reads []string
	// Notes replace the usual note for a shared flag it does not read.
	Notes map[string]func(p Params) string

	// Prompts and Outputs say where its prompts and output lengths come
	// from, for the notes on flags that would set them.
	Prompts, Outputs string
	// NoTemplate is why --apply-chat-template has no effect, for a dataset
	// that does not read it.
	NoTemplate string
	// Templated: it always applies the chat template (the reference sets
	// apply_chat_template for it, and prints it so).
	Templated bool
	// Recorded: its prompts are recorded conversations with their own
	// lengths (one-batch's replay datasets).
	Recorded bool
	// Images: its rows carry images (the report shows the vision tokens).
	Images bool
	// Audio: its rows carry audio files (Row.Audio), and only the
	// transcription backends take them.
	Audio bool
	// RefusesIDs: --tokenize-prompt is an error, not ignored (its prompts
	// are text whose token ids the server would not see as sent).
	RefusesIDs bool
	// NoEmbeddings: the embedding backends refuse it.
	NoEmbeddings bool
	// Timed: its rows carry their send times (a trace's), so the rate,
	// ramp and gap flags do not apply.
	Timed bool
	// Delays: its conversations carry the delays a trace recorded before
	// their turns (--think-time trace, its default).
	Delays bool
	// ZeroPrompts: --num-prompts 0 still sends requests (it reads every
	// row, or ignores the count).
	ZeroPrompts bool
	// OpensPath: a given --dataset-path is a file it reads, opened before
	// the run waits for a server.
	OpensPath bool
	// Downloads says what it downloads when --dataset-path is empty ("":
	// nothing).
	Downloads string
	// FileTag is the part of the default result file's name after the
	// request count; nil is the dataset's name.
	FileTag func(p Params) string
}

// Flag is a flag of a dataset's own: the option as the command line
// parses it, the Params field it sets, and why it would have no effect.
type Flag struct {
	Opt  argparse.Option
	Bind argparse.Binding[Params]
	// Ignored is why dataset s, which does not read the flag, ignores it.
	Ignored func(s Spec) string
	// Unused, if set, is a note for the dataset that reads it ("" when it
	// has an effect).
	Unused func(p Params) string
}

// specs is the dataset table, in the reference's --dataset-name order.
var specs = []Spec{
	{Name: "agentic-trace", Load: loadAgentic, Preflight: preflightAgentic, Flags: agenticFlags,
		Reads:   []string{"--dataset-path", "--num-prompts", "--sharegpt-output-len"},
		Prompts: "the trace's conversations", Outputs: "output lengths are --sharegpt-output-len, else 220",
		NoTemplate:  "its conversations go to a chat API, whose server applies the template",
		ZeroPrompts: true, OpensPath: true},
	{Name: "sharegpt", Load: loadShareGPT, Preflight: checkShareGPTOutputLen,
		Reads:   []string{"--dataset-path", "--num-prompts", "--sharegpt-output-len", "--sharegpt-context-len", "--apply-chat-template", "--prompt-suffix"},
		Prompts: "the ShareGPT conversations", Outputs: "output lengths are the completions', or --sharegpt-output-len",
		Recorded: true, RefusesIDs: true, OpensPath: true, Downloads: "ShareGPT"},
	{Name: "custom", Load: loadCustom, Preflight: preflightCustom,
		Reads:   []string{"--dataset-path", "--num-prompts", "--sharegpt-output-len", "--sharegpt-context-len", "--apply-chat-template", "--prompt-suffix"},
		Prompts: "the conversations in --dataset-path", Outputs: "output lengths are the completions', or --sharegpt-output-len",
		Recorded: true, RefusesIDs: true, OpensPath: true},
	{Name: "openai", Load: loadOpenAI, Preflight: preflightOpenAI,
		Reads:   []string{"--dataset-path", "--num-prompts", "--sharegpt-output-len", "--apply-chat-template"},
		Prompts: "the chat requests in --dataset-path", Outputs: "output lengths are each line's max_tokens, or --sharegpt-output-len",
		ZeroPrompts: true, OpensPath: true},
	{Name: "random", Load: loadRandom, Preflight: preflightRandom,
		Reads:      []string{"--dataset-path", "--num-prompts", "--random-input-len", "--random-output-len", "--random-range-ratio", "--tokenize-prompt", "--session-turns", "--per-turn-input-len", "--rerank-docs"},
		Outputs:    "output lengths come from --random-output-len",
		NoTemplate: "its prompts are random token text, sent as is",
		OpensPath:  true, Downloads: "ShareGPT (its text)", FileTag: randomTag},
	{Name: "random-ids", Load: loadRandom, Preflight: preflightRandom,
		Reads:   []string{"--num-prompts", "--random-input-len", "--random-output-len", "--random-range-ratio", "--tokenize-prompt", "--session-turns", "--per-turn-input-len", "--rerank-docs"},
		Prompts: "consecutive token ids", Outputs: "output lengths come from --random-output-len",
		NoTemplate: "its prompts are random token text, sent as is", FileTag: randomTag},
	{Name: "generated-shared-prefix", Load: loadGSP, Parsed: gspParsed, Preflight: checkGSP, Flags: gspFlags, Notes: gspNotes,
		Prompts: "random text sized by the --gsp-* flags", Outputs: "output lengths come from --gsp-output-len",
		NoTemplate: "its prompts are random token text, sent as is",
		RefusesIDs: true, ZeroPrompts: true},
	{Name: "mmmu", Load: loadMMMU, Preflight: preflightMMMU,
		Reads:   []string{"--dataset-path", "--num-prompts", "--random-output-len", "--apply-chat-template"},
		Prompts: "the MMMU questions", Outputs: "output lengths are --random-output-len",
		Templated: true, Images: true, RefusesIDs: true, NoEmbeddings: true, OpensPath: true, Downloads: "MMMU"},
	{Name: "image", Load: loadImage, Preflight: preflightImage, Flags: imageFlags,
		Reads:   []string{"--num-prompts", "--random-input-len", "--random-output-len", "--random-range-ratio", "--apply-chat-template"},
		Prompts: "random text and generated images", Outputs: "output lengths come from --random-output-len",
		Templated: true, Images: true, RefusesIDs: true, NoEmbeddings: true, FileTag: imageTag},
	{Name: "mooncake", Load: loadMooncake, Preflight: preflightMooncake, Flags: mooncakeFlags,
		Reads:   []string{"--dataset-path", "--num-prompts", "--apply-chat-template", "--use-trace-timestamps"},
		Prompts: "the trace's hash ids", Outputs: "output lengths come from the trace",
		NoEmbeddings: true, Timed: true, Downloads: "the Mooncake trace"},
	{Name: "longbench_v2", Load: loadLongBench,
		Reads:   []string{"--dataset-path", "--num-prompts", "--sharegpt-output-len", "--sharegpt-context-len"},
		Prompts: "the LongBench v2 contexts", Outputs: "output lengths are --sharegpt-output-len, else 10",
		NoTemplate: "its prompts are sent as plain text",
		OpensPath:  true, Downloads: "LongBench-v2"},
	{Name: "speed-bench", Load: loadSpeedBench, Preflight: preflightSpeedBench, Flags: speedBenchFlags,
		Reads:   []string{"--dataset-path", "--num-prompts", "--apply-chat-template"},
		Prompts: "the SPEED-Bench file", Outputs: "output lengths are --speed-bench-output-len",
		OpensPath: true},
	// Ours: session traces in AIPerf's and SGLang TraceLab's formats.
	{Name: "mooncake-sessions", Load: loadMooncakeSessions, Preflight: preflightSessions, CheckFile: checkMooncakeSessions,
		Reads:   []string{"--dataset-path", "--num-prompts", "--mooncake-slowdown-factor"},
		Prompts: "the trace's lines", Outputs: "output lengths come from the trace",
		NoTemplate:   "its sessions go to a chat API, whose server applies the template",
		NoEmbeddings: true, Delays: true, ZeroPrompts: true, OpensPath: true},
	{Name: "tracelab", Load: loadTraceLab, Preflight: preflightSessions, CheckFile: checkTraceLab,
		Reads:   []string{"--dataset-path", "--num-prompts", "--mooncake-slowdown-factor"},
		Prompts: "the trace's token counts", Outputs: "output lengths come from the trace",
		NoTemplate:   "its sessions go to a chat API, whose server applies the template",
		NoEmbeddings: true, Timed: true, Delays: true, ZeroPrompts: true, OpensPath: true},
	// Ours: audio files for the transcription backends.
	{Name: "audio", Load: loadAudio, Preflight: preflightAudio, CheckFile: checkAudioDir, Flags: audioFlags,
		Reads:   []string{"--dataset-path", "--num-prompts"},
		Prompts: "the audio clips", Outputs: "a transcript is as long as its audio",
		NoTemplate: "its requests are audio files", FileTag: audioTag,
		RefusesIDs: true, NoEmbeddings: true, Audio: true},
}

// DefaultName is the --dataset-name when none is given, the reference's.
const DefaultName = "sharegpt"

// Lookup returns the row of the named dataset (the zero Spec, which uses
// no flag, for an unknown name).
func Lookup(name string) (Spec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Names are the --dataset-name choices, in the table's order.
func Names() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// NamesOf are the names of the datasets whose Spec satisfies ok, in the
// table's order (for the messages that list them).
func NamesOf(ok func(Spec) bool) []string {
	var out []string
	for _, s := range specs {
		if ok(s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Flags are the datasets' own flags, in the table's order; the caller
// must not change them. The command line's table looks each flag up here
// at start-up, so the list is made once (again only if specs changes, as
// in a test).
func Flags() []Flag {
	flagsMade.Lock()
	defer flagsMade.Unlock()
	if len(flagsMade.specs) != len(specs) || len(specs) > 0 && &flagsMade.specs[0] != &specs[0] {
		var out []Flag
		for _, s := range specs {
			out = append(out, s.Flags...)
		}
		flagsMade.specs, flagsMade.flags = specs, slices.Clip(out)
	}
	return flagsMade.flags
}

var flagsMade struct {
	sync.Mutex
	specs []Spec
	flags []Flag
}

// Load builds the rows of the dataset p names.
func Load(ctx context.Context, p Params, env Env) ([]Row, error) {
	if env.Out == nil {
		env.Out = io.Discard
	}
	env.meter = newMeter(ctx, env.Progress, env.Now)
	if p.NumPrompts < 0 {
		return nil, fmt.Errorf("--num-prompts: must not be negative, got %d", p.NumPrompts)
	}
	s, ok := Lookup(p.Name)
	if !ok {
		return nil, fmt.Errorf("--dataset-name %s: unknown dataset", p.Name)
	}
	if err := refuseIDs(s, p); err != nil {
		return nil, err
	}
	return s.Load(ctx, p, env)
}

// Preflight makes the checks of the dataset p names that need neither a
// tokenizer nor a file, with the loader's own messages, so that a run can
// refuse bad flags before it contacts the server. Load makes them again.
func Preflight(p Params) error {
	s, ok := Lookup(p.Name)
	if !ok {
		return nil
	}
	if err := refuseIDs(s, p); err != nil {
		return err
	}
	if s.Preflight == nil {
		return nil
	}
	return s.Preflight(p)
}

// Uses reports whether the dataset reads the flag, shared or its own.
func (s Spec) Uses(flag string) bool { return slices.Contains(s.Reads, flag) || own(s, flag) != nil }

// CheckParsed makes the checks of p's dataset that the reference makes as
// it parses the flags.
func CheckParsed(p Params) error {
	if s, ok := Lookup(p.Name); ok && s.Parsed != nil {
		return s.Parsed(p)
	}
	return nil
}

func refuseIDs(s Spec, p Params) error {
	if p.TokenizePrompt && s.RefusesIDs {
		return fmt.Errorf("--tokenize-prompt: not supported by --dataset-name %s (only %s)", p.Name, and(readers("--tokenize-prompt")))
	}
	return nil
}

// CheckPath opens --dataset-path when p's dataset reads it, so that a
// missing or unreadable file is named before the run waits for a server;
// the message is the loader's. A dataset with CheckFile reads it through.
func CheckPath(p Params) error {
	s, ok := Lookup(p.Name)
	if p.Path == "" || !ok {
		return nil
	}
	if s.OpensPath {
		f, err := openDatasetFile(p.Path, "--dataset-path "+p.Path, "a file")
		if err != nil {
			return err
		}
		f.Close()
	}
	if s.CheckFile != nil {
		return s.CheckFile(context.Background(), p)
	}
	return nil
}

// FileTag is the dataset's part of the default result file's name.
func FileTag(p Params) string {
	if s, ok := Lookup(p.Name); ok && s.FileTag != nil {
		return s.FileTag(p)
	}
	return p.Name
}

// shared are the flags several datasets read, each with why a dataset
// that does not read it ignores it.
var shared = map[string]func(s Spec) string{
	"--dataset-path":         prompts,
	"--num-prompts":          func(Spec) string { return "it reads no count" },
	"--sharegpt-output-len":  outputs,
	"--sharegpt-context-len": func(Spec) string { return "it drops no requests by length" },
	"--random-input-len":     prompts,
	"--random-output-len":    outputs,
	"--random-range-ratio":   func(Spec) string { return "it draws no random lengths" },
	"--apply-chat-template":  func(s Spec) string { return s.NoTemplate },
	"--prompt-suffix":        func(Spec) string { return "only " + and(readers("--prompt-suffix")) + " append it" },
	"--tokenize-prompt":      func(Spec) string { return "only " + and(readers("--tokenize-prompt")) + " send token ids" },
	"--use-trace-timestamps": func(Spec) string { return "it has no timestamps" },
	"--session-turns":        func(Spec) string { return "only " + and(readers("--session-turns")) + " make synthetic sessions" },
	"--per-turn-input-len":   func(Spec) string { return "only " + and(readers("--per-turn-input-len")) + " make synthetic sessions" },
	"--rerank-docs":          func(Spec) string { return "only " + and(readers("--rerank-docs")) + " build rerank rows" },
}

func prompts(s Spec) string { return "its prompts come from " + s.Prompts }
func outputs(s Spec) string { return s.Outputs }

// Note says why a given dataset flag would have no effect with p's
// dataset ("" when it has one, or flag is not a dataset flag), as
// "--dataset-name X ignores it (why)" or a note of the dataset's own.
func Note(flag string, p Params) string {
	s, ok := Lookup(p.Name)
	if !ok {
		return ""
	}
	if f := own(s, flag); f != nil {
		if f.Unused != nil {
			return f.Unused(p)
		}
		return ""
	}
	ignored, isShared := shared[flag]
	switch {
	case isShared:
		if slices.Contains(s.Reads, flag) || flag == "--tokenize-prompt" && s.RefusesIDs {
			return "" // read, or refused by Preflight
		}
		if n, ok := s.Notes[flag]; ok {
			return n(p)
		}
	default:
		if slices.Contains(s.Reads, flag) {
			return "" // another dataset's own flag it reads too
		}
		if ignored = ownerIgnored(flag); ignored == nil {
			return ""
		}
	}
	return "--dataset-name " + p.Name + " ignores it (" + ignored(s) + ")"
}

// own is s's own flag of that name, if it has one.
func own(s Spec, name string) *Flag {
	for i := range s.Flags {
		if s.Flags[i].Opt.Name == name {
			return &s.Flags[i]
		}
	}
	return nil
}

// ownerIgnored is the Ignored of the dataset that declares the flag.
func ownerIgnored(name string) func(Spec) string {
	for _, s := range specs {
		if f := own(s, name); f != nil {
			return f.Ignored
		}
	}
	return nil
}

// Readers are the datasets that read a shared flag, in the table's order.
func Readers(flag string) []string { return readers(flag) }

// readers are the datasets that read a shared flag, in the table's order.
func readers(flag string) []string {
	var out []string
	for _, s := range specs {
		if slices.Contains(s.Reads, flag) {
			out = append(out, s.Name)
		}
	}
	return out
}

// and lists names as "a, b and c".
func and(names []string) string {
	if n := len(names); n > 1 {
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return strings.Join(names, "")
}
