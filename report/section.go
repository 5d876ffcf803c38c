package report

import (
	"io"
	"strings"

	"benchserve/internal/py/pyfmt"
)

// Row is one label and value of a section of our own.
type Row struct{ Label, Value string }

// F formats a value as the reference's "{:<10.2f}" does before padding.
func F(v float64) string { return pyfmt.Fixed(v, 2) }

// Section prints sections of our own after the reference block, in its
// layout: a 50-wide rule with the title centred in '-', then
// "{:<40} {:<10}" lines; a closing rule of '=' ends the last one.
func Section(w io.Writer, titled map[string][]Row, order []string) error {
	var b strings.Builder
	for _, title := range order {
		b.WriteString(pyfmt.Center(title, '-', 50))
		b.WriteByte('\n')
		for _, l := range titled[title] {
			b.WriteString(pyfmt.Left(l.Label, 40))
			b.WriteByte(' ')
			b.WriteString(pyfmt.Left(l.Value, 10))
			b.WriteByte('\n')
		}
	}
	if len(order) > 0 {
		b.WriteString(strings.Repeat("=", 50))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
