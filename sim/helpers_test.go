package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newTestServer runs a simulator (the instant preset unless edit changes
// it) on a loopback listener.
func newTestServer(t *testing.T, edit func(*Config)) (*Server, string) {
	t.Helper()
	cfg, _ := Preset(PresetInstant)
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Served as the command serves it, on a listener of its own (requests
	// then carry the kernel's arrival time).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, s.URL()
}

// reply is a whole response.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, url, body string, header ...string) reply {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func post(t *testing.T, url, body string) reply { t.Helper(); return do(t, http.MethodPost, url, body) }

// events splits an SSE body into the payloads of its "data:" lines. Every
// event must be one "data: <payload>" line followed by a blank line.
func events(t *testing.T, body []byte) []string {
	t.Helper()
	if len(body) == 0 {
		return nil
	}
	if !bytes.HasSuffix(body, []byte("\n\n")) {
		t.Fatalf("stream does not end with a blank line: %q", tail(body))
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		if strings.Contains(ev, "\n") || !strings.HasPrefix(ev, "data: ") {
			t.Fatalf("event is not one \"data: \" line: %q", ev)
		}
		out = append(out, strings.TrimPrefix(ev, "data: "))
	}
	return out
}

func tail(b []byte) []byte { return b[max(0, len(b)-200):] }

// shape describes a JSON document by structure alone: the keys of every
// object in order and the type of every value; an array shows the
// distinct shapes of its items.
func shape(t *testing.T, doc string) string {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	var b strings.Builder
	if err := shapeValue(d, &b); err != nil {
		t.Fatalf("%v in %s", err, doc)
	}
	return b.String()
}

func shapeValue(d *json.Decoder, b *strings.Builder) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			b.WriteByte('{')
			for i := 0; d.More(); i++ {
				k, err := d.Token()
				if err != nil {
					return err
				}
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(k.(string))
				b.WriteByte(':')
				if err := shapeValue(d, b); err != nil {
					return err
				}
			}
			d.Token()
			b.WriteByte('}')
			return nil
		}
		seen := map[string]bool{}
		var items []string
		for d.More() {
			var ib strings.Builder
			if err := shapeValue(d, &ib); err != nil {
				return err
			}
			if s := ib.String(); !seen[s] {
				seen[s] = true
				items = append(items, s)
			}
		}
		d.Token()
		b.WriteString("[" + strings.Join(items, "|") + "]")
	case string:
		b.WriteString("s")
	case json.Number:
		b.WriteString("n")
	case bool:
		b.WriteString("b")
	case nil:
		b.WriteString("null")
	}
	return nil
}

// streamShape is the shapes of a stream's events with runs of equal
// shapes collapsed ("x+" for a run of more than one): the order of chunk
// kinds.
func streamShape(t *testing.T, evs []string) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		s := ev
		if ev != "[DONE]" {
			s = shape(t, ev)
		}
		switch n := len(out); {
		case n > 0 && (out[n-1] == s || out[n-1] == s+"+"):
			out[n-1] = s + "+"
		default:
			out = append(out, s)
		}
	}
	return out
}

// fixture is one case of testdata/wire.
type fixture struct {
	status int
	header http.Header
	body   []byte
}

func loadFixture(t *testing.T, name string) fixture {
	t.Helper()
	dir := filepath.Join("testdata", "wire", name)
	h, err := os.ReadFile(filepath.Join(dir, "response.headers"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(bytes.NewReader(h), strings.NewReader("\r\n"))), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	body, err := os.ReadFile(filepath.Join(dir, "response.body"))
	if err != nil {
		t.Fatal(err)
	}
	return fixture{resp.StatusCode, resp.Header, body}
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}
