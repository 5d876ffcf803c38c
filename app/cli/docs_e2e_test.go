package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// docCmd is a benchserve command line found in a Markdown file.
type docCmd struct {
	where string // file:line
	args  []string
}

// docCommands returns the benchserve command lines of a Markdown text: in
// fenced blocks (backslash-continued lines joined, comments dropped, each
// command of a && chain; one sent to the background with & is a server,
// not a run) and in inline code.
func docCommands(name, text string) ([]docCmd, error) {
	var out []docCmd
	add := func(line int, src string) error {
		cmds, err := shellCommands(src)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", name, line, err)
		}
		for _, c := range cmds {
			out = append(out, docCmd{fmt.Sprintf("%s:%d", name, line), c})
		}
		return nil
	}
	lines := strings.Split(text, "\n")
	fenced := false
	// prose is the text outside fenced blocks, where inline code may wrap
	// from one line to the next; a blank line or a block is a \x00, which
	// inline code cannot cross. starts[k] is where line k+1 begins in it.
	var prose strings.Builder
	starts := make([]int, len(lines))
	for i := 0; i < len(lines); i++ {
		starts[i] = prose.Len()
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			prose.WriteString("\x00")
			continue
		}
		if !fenced {
			if strings.TrimSpace(l) == "" {
				l = "\x00"
			}
			prose.WriteString(l + "\n")
			continue
		}
		prose.WriteString("\x00")
		if m := heredoc.FindStringSubmatch(l); m != nil {
			// A file the commands read: its lines are not commands.
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != m[2]; i++ {
				starts[i] = prose.Len()
			}
			if i < len(lines) {
				starts[i] = prose.Len()
			}
			continue
		}
		start := i
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			starts[i] = prose.Len()
			l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if err := add(start+1, l); err != nil {
			return nil, err
		}
	}
	p := prose.String()
	for _, m := range inlineCode.FindAllStringSubmatchIndex(p, -1) {
		code := strings.Join(strings.Fields(p[m[2]:m[3]]), " ")
		if !isBenchserve(code) {
			continue
		}
		line := sort.SearchInts(starts, m[0]+1) // the last line starting at or before m[0], from 1
		if err := add(line, code); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return lineNo(out[i].where) < lineNo(out[j].where) })
	return out, nil
}

var inlineCode = regexp.MustCompile("`([^`\x00]+)`")

// heredoc is a fenced line that writes a file the commands after it read:
// cat > NAME <<'EOF' (the quotes optional).
var heredoc = regexp.MustCompile(`^\s*cat > (\S+) <<'?(\w+)'?\s*$`)

// docFiles are the files the docs' heredocs write, by name; a name
// written twice with other contents is an error.
func docFiles(name, text string, files map[string]string) error {
	lines := strings.Split(text, "\n")
	fenced := false
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
			fenced = !fenced
			continue
		}
		m := heredoc.FindStringSubmatch(lines[i])
		if !fenced || m == nil {
			continue
		}
		var body []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != m[2]; j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			return fmt.Errorf("%s:%d: no %s ends the file %s", name, i+1, m[2], m[1])
		}
		data := strings.Join(body, "\n") + "\n"
		if old, ok := files[m[1]]; ok && old != data {
			return fmt.Errorf("%s:%d: %s is written twice with other contents", name, i+1, m[1])
		}
		files[m[1]] = data
		i = j
	}
	return nil
}

func lineNo(where string) int {
	n, _ := strconv.Atoi(where[strings.LastIndexByte(where, ':')+1:])
	return n
}

func isBenchserve(s string) bool {
	return strings.HasPrefix(s, "benchserve ") || strings.HasPrefix(s, "./benchserve ")
}

// shellCommands splits a shell line into commands (at &&, ||, ;, | and
// &) and returns the arguments of those that run benchserve in the
// foreground: quotes and backslashes as sh reads them, a # starting a word
// begins a comment, VAR=value words before the program are dropped.
func shellCommands(line string) ([][]string, error) {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	end := func(background bool) {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
		if background {
			words = nil
		}
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			words = words[1:]
		}
		if len(words) > 0 && (words[0] == "benchserve" || words[0] == "./benchserve") {
			cmds = append(cmds, words[1:])
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			end(false)
			return cmds, nil
		case c == '&' || c == '|' || c == ';':
			double := i+1 < len(line) && line[i+1] == c
			end(c == '&' && !double)
			if double {
				i++
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", line)
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("unclosed \" in %q", line)
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end(false)
	return cmds, nil
}

func TestDocCommandsExtraction(t *testing.T) {
	md := "Run `benchserve --sim` or `./benchserve sim --port 1`; not `--sim` alone.\n" +
		"```sh\n" +
		"CGO_ENABLED=0 go build -o benchserve ./cmd/benchserve && ./benchserve --sim\n" +
		"./benchserve sim --port 30000 &     # a server\n" +
		"# a comment: ./benchserve --sim\n" +
		"./benchserve sweep --sim --slo 'p99_ttft_ms<500' \\\n" +
		"    --slo \"failed_rate<0.01\" --tag a\\ b  # why\n" +
		"```\n" +
		"```sh\n" +
		"cat > s.jsonl <<'EOF'\n" +
		"{\"a\": \"it's ./benchserve --sim\"}\n" +
		"EOF\n" +
		"```\n" +
		"After the block, `./benchserve --sim --num-prompts 5`, and one that\n" +
		"wraps: `benchserve --sim\n--num-prompts 6`; `not\n\ncode`.\n"
	got, err := docCommands("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	want := []docCmd{
		{"x.md:1", []string{"--sim"}},
		{"x.md:1", []string{"sim", "--port", "1"}},
		{"x.md:3", []string{"--sim"}},
		{"x.md:6", []string{"sweep", "--sim", "--slo", "p99_ttft_ms<500", "--slo", "failed_rate<0.01", "--tag", "a b"}},
		{"x.md:14", []string{"--sim", "--num-prompts", "5"}},
		{"x.md:15", []string{"--sim", "--num-prompts", "6"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	files := map[string]string{}
	if err := docFiles("x.md", md, files); err != nil || files["s.jsonl"] != "{\"a\": \"it's ./benchserve --sim\"}\n" || len(files) != 1 {
		t.Errorf("heredoc files %q, %v", files, err)
	}
	if _, err := docCommands("y.md", "```\nbenchserve --sim --tag 'x\n```\n"); err == nil {
		t.Error("an unclosed quote was not reported")
	}
}

// Every benchserve command with --sim in README.md and docs/*.md runs as
// written, offline (the Hub switched off, its cache empty), in a fresh
// working directory, exits 0 and prints nothing on stderr but notes.
// Changes the working directory: not parallel.
func TestDocsSimCommandsRun(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var cmds []docCmd
	seen := map[string]bool{}
	written := map[string]string{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		found, err := docCommands(rel, string(text))
		if err != nil {
			t.Fatal(err)
		}
		if err := docFiles(rel, string(text), written); err != nil {
			t.Fatal(err)
		}
		for _, c := range found {
			key := strings.Join(c.args, "\x00")
			if !hasArg(c.args, "--sim") || seen[key] {
				continue
			}
			seen[key] = true
			cmds = append(cmds, c)
		}
	}
	// The README's first demo and its sweep profile are among them: the
	// extraction found the blocks.
	if !seen["--sim"] || len(cmds) < 10 {
		t.Fatalf("found %d commands (the demo: %v): %q", len(cmds), seen["--sim"], cmds)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for name, data := range written {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HF_HUB_OFFLINE": "1", "HOME": dir, "XDG_CACHE_HOME": filepath.Join(dir, "cache")}
	// Two at a time: most of a command's time is the simulator's modelled
	// waits, and the test should end within about a minute. The commands
	// of one line (a && chain: a plan saved, then replayed) run in order.
	var lines [][]docCmd
	at := map[string]int{}
	for _, c := range cmds {
		i, ok := at[c.where]
		if !ok {
			i = len(lines)
			at[c.where] = i
			lines = append(lines, nil)
		}
		lines[i] = append(lines[i], c)
	}
	todo := make(chan []docCmd, len(lines))
	for _, l := range lines {
		todo <- l
	}
	close(todo)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range todo {
				for _, c := range l {
					runDocCommand(t, env, c)
				}
			}
		}()
	}
	wg.Wait()
}

// runDocCommand runs c and reports its failure: an exit other than 0, or
// a line on stderr that is not a note.
func runDocCommand(t *testing.T, env map[string]string, c docCmd) {
	cmd := "benchserve " + strings.Join(c.args, " ")
	var out, errb bytes.Buffer
	code := Main(context.Background(), c.args, IO{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
	// A gate's verdict on latencies (exit 4) is the machine's: the
	// command ran as written, and a loaded machine may fail its bound.
	gated := code == 4 && (hasArg(c.args, "--threshold") || hasArg(c.args, "--ab-max-regression"))
	if code != 0 && !gated {
		t.Errorf("%s: %s: exit %d\n%s\n%s", c.where, cmd, code, tail(out.String(), 20), errb.String())
		return
	}
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		// A dataset's progress line (progressLine) comes when a build
		// takes seconds, as on a loaded machine; so do a late /metrics
		// read's warning and the failed gate's error line.
		machine := strings.Contains(l, "the server view leaves that read out") ||
			gated && strings.Contains(l, ": error: ")
		if l != "" && !strings.Contains(l, ": note: ") && !progressLine.MatchString(l) && !machine {
			t.Errorf("%s: %s: a line on stderr that is not a note: %s", c.where, cmd, l)
		}
	}
}

func hasArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}

func tail(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
