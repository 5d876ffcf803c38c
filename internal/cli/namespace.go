package cli

import (
	"strings"

	"benchserve/bench"
	"benchserve/internal/argparse"
)

// Namespace returns what the reference prints for its args: the repr of an
// argparse Namespace, "Namespace(backend='sglang', base_url=None, ...)",
// attributes in the reference's order and our no_keepalive last. The values
// of --header are secrets and print as 'Key=***'.
func Namespace(c *bench.Config) string {
	var b strings.Builder
	b.WriteString("Namespace(")
	for i, f := range flags {
		if i > 0 {
			b.WriteString(", ")
		}
		v := f.bind.get(c)
		if f.opt.Name == "--header" && v != nil {
			v = redact(c.Header)
		}
		b.WriteString(dest(f))
		b.WriteByte('=')
		b.WriteString(argparse.ReprValue(v))
	}
	b.WriteByte(')')
	return b.String()
}

// redact keeps each header's name: "Authorization=abc" → "Authorization=***".
func redact(items []string) []string {
	out := make([]string, len(items))
	for i, h := range items {
		k, _, ok := strings.Cut(h, "=")
		if ok {
			out[i] = k + "=***"
		} else {
			out[i] = "***"
		}
	}
	return out
}
