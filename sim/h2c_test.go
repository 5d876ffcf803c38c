package sim

import (
	"net"
	"net/http"
	"testing"
)

// The simulator serves HTTP/1.1 and, on the same port, h2c with prior
// knowledge (benchserve --h2c).
func TestServesH2CAndHTTP1(t *testing.T) {
	cfg, _ := Preset(PresetInstant)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ln); err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	h2c := &http.Transport{Protocols: &p}
	defer h2c.CloseIdleConnections()
	h1 := &http.Transport{}
	defer h1.CloseIdleConnections()
	for _, c := range []struct {
		rt    http.RoundTripper
		major int
	}{{h2c, 2}, {h1, 1}} {
		resp, err := (&http.Client{Transport: c.rt}).Get(s.URL() + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != c.major {
			t.Errorf("status %d over HTTP/%d, want 200 over HTTP/%d", resp.StatusCode, resp.ProtoMajor, c.major)
		}
	}
}
