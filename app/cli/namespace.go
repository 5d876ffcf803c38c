package cli

import (
	"net/url"
	"strings"

	"benchserve/bench"
	"benchserve/internal/py/argparse"
)

// Namespace returns what the reference prints for its args: the repr of an
// argparse Namespace, "Namespace(backend='sglang', base_url=None, ...)",
// attributes in the reference's order and ours last. The values of --header
// are secrets and print as 'Key=***'; a password in --base-url as xxxxx.
func Namespace(c *bench.Config) string {
	var b strings.Builder
	b.WriteString("Namespace(")
	for i, f := range flags {
		if i > 0 {
			b.WriteString(", ")
		}
		v := f.bind.get(c)
		switch {
		case f.opt.Name == "--header" && v != nil:
			v = redact(c.Header)
		case f.opt.Name == "--base-url" && v != nil:
			v = redactURL(*c.BaseURL)
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

// redactURL hides the password of a URL with credentials (of each, in a
// comma-separated list).
func redactURL(u string) string {
	if strings.Contains(u, ",") {
		items := strings.Split(u, ",")
		for i, it := range items {
			items[i] = redactURL(it)
		}
		return strings.Join(items, ",")
	}
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	return p.Redacted()
}
