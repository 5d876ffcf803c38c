package argparse

import (
	"strconv"
	"strings"

	"benchserve/internal/py/pyfmt"
)

// The layout constants of Python's HelpFormatter.
const (
	defaultColumns  = 80
	maxHelpPosition = 24
	indentStep      = 2
)

// textWidth is HelpFormatter's width: the terminal columns less 2.
func textWidth(columns int) int {
	if columns <= 0 {
		columns = defaultColumns
	}
	return columns - 2
}

// Usage returns the usage line(s) as argparse prints them before an error,
// wrapped for a terminal of the given columns (0: 80), ending in "\n".
func (p *Parser) Usage(columns int) string {
	const prefix = "usage: "
	width := textWidth(columns)
	parts := p.usageParts()
	usage := p.Prog
	if len(parts) > 0 {
		usage += " " + strings.Join(parts, " ")
	}
	if len(prefix)+len(usage) > width {
		var lines []string
		if float64(len(prefix)+len(p.Prog)) <= 0.75*float64(width) {
			indent := strings.Repeat(" ", len(prefix)+len(p.Prog)+1)
			lines = fillParts(append([]string{p.Prog}, parts...), indent, len(prefix), width)
		} else {
			indent := strings.Repeat(" ", len(prefix))
			lines = append([]string{p.Prog}, fillParts(parts, indent, -1, width)...)
		}
		usage = strings.Join(lines, "\n")
	}
	return prefix + usage + "\n"
}

// usageParts gives one "[--opt VALUE]" per option; a run of mutually
// exclusive options becomes "[--a A", "|", "--b B]", as argparse splits it.
func (p *Parser) usageParts() []string {
	var parts []string
	for i := 0; i < len(p.opts); i++ {
		o := p.opts[i]
		if o.excl != nil && p.contiguous(i, *o.excl) {
			set := *o.excl
			for j, member := range set {
				part := member.usage()
				if j == 0 {
					part = "[" + part
				}
				if j == len(set)-1 {
					part += "]"
				}
				if j > 0 {
					parts = append(parts, "|")
				}
				parts = append(parts, part)
			}
			i += len(set) - 1
			continue
		}
		parts = append(parts, "["+o.usage()+"]")
	}
	return parts
}

// contiguous reports whether set starts at p.opts[i] and runs on unbroken.
func (p *Parser) contiguous(i int, set []*opt) bool {
	if i+len(set) > len(p.opts) {
		return false
	}
	for j, o := range set {
		if p.opts[i+j] != o {
			return false
		}
	}
	return true
}

func (o *opt) usage() string {
	if !o.takesValues() {
		return o.names[0]
	}
	return o.names[0] + " " + o.argsText()
}

func (o *opt) metavar() string {
	switch {
	case o.Metavar != "":
		return o.Metavar
	case o.Choices != nil:
		return "{" + strings.Join(o.Choices, ",") + "}"
	}
	return strings.ToUpper(o.Dest)
}

func (o *opt) argsText() string {
	m := o.metavar()
	switch o.Nargs {
	case OneOrMore:
		return m + " [" + m + " ...]"
	case ZeroOrMore:
		return "[" + m + " ...]"
	}
	return m
}

// invocation is the option as listed in the help: "-h, --help",
// "--header HEADER [HEADER ...]".
func (o *opt) invocation() string {
	if !o.takesValues() {
		return strings.Join(o.names, ", ")
	}
	args := o.argsText()
	items := make([]string, len(o.names))
	for i, n := range o.names {
		items[i] = n + " " + args
	}
	return strings.Join(items, ", ")
}

// helpText is the option's help with " (default: X)" added when the
// default says something: not None, not false, not "".
func (o *opt) helpText() string {
	d := defaultText(o.Default)
	if d == "" {
		return o.Help
	}
	return strings.TrimSpace(o.Help + " (default: " + d + ")")
}

func defaultText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case float64:
		return pyfmt.Float(v)
	case []any:
		items := make([]string, len(v))
		for i, x := range v {
			items[i] = defaultText(x)
		}
		return strings.Join(items, " ")
	}
	return ""
}

// Help returns the full help text, laid out as Python's HelpFormatter does
// for a terminal of the given columns (0: 80): usage, description, then each
// group with its options, help text starting at column 24 at most.
func (p *Parser) Help(columns int) string {
	width := textWidth(columns)
	maxPos := min(maxHelpPosition, max(width-20, indentStep*2))
	longest := 0
	for _, o := range p.opts {
		longest = max(longest, len(o.invocation())+indentStep)
	}
	helpPos := min(longest+2, maxPos)
	helpWidth := max(width-helpPos, 11)
	actionWidth := helpPos - indentStep - 2

	var b strings.Builder
	b.WriteString(p.Usage(columns))
	if p.Description != "" {
		b.WriteString("\n")
		for _, line := range wrapWords(p.Description, max(width, 11)) {
			b.WriteString(line + "\n")
		}
	}
	for _, g := range p.groups {
		if len(g.opts) == 0 {
			continue
		}
		b.WriteString("\n" + g.Title + ":\n")
		for _, o := range g.opts {
			head := o.invocation()
			lines := wrapWords(o.helpText(), helpWidth)
			b.WriteString("  ")
			switch {
			case len(lines) == 0:
				b.WriteString(head + "\n")
				continue
			case len(head) <= actionWidth:
				b.WriteString(pyfmt.Left(head, actionWidth) + "  ")
			default:
				b.WriteString(head + "\n" + strings.Repeat(" ", helpPos))
			}
			b.WriteString(lines[0] + "\n")
			for _, l := range lines[1:] {
				b.WriteString(strings.Repeat(" ", helpPos) + l + "\n")
			}
		}
	}
	return b.String()
}

// fillParts is argparse's get_lines: parts joined by spaces, a new line
// (starting with indent) when the next part would pass width. With
// prefixLen >= 0 the first line has no indent and starts prefixLen in.
func fillParts(parts []string, indent string, prefixLen, width int) []string {
	var lines, line []string
	lineLen := len(indent) - 1
	if prefixLen >= 0 {
		lineLen = prefixLen - 1
	}
	for _, part := range parts {
		if lineLen+1+len(part) > width && len(line) > 0 {
			lines = append(lines, indent+strings.Join(line, " "))
			line = nil
			lineLen = len(indent) - 1
		}
		line = append(line, part)
		lineLen += len(part) + 1
	}
	if len(line) > 0 {
		lines = append(lines, indent+strings.Join(line, " "))
	}
	if prefixLen >= 0 && len(lines) > 0 {
		lines[0] = lines[0][len(indent):]
	}
	return lines
}

// wrapWords collapses whitespace and fills lines of at most width columns;
// a word longer than width gets a line of its own.
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
