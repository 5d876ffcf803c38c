package sim

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --tls-self-signed serves HTTPS with a certificate written for the
// client: a client trusting it speaks HTTP/1.1 or, by ALPN, h2 to the
// same port; one that does not trust it fails the handshake.
func TestTLSSelfSigned(t *testing.T) {
	pemFile := filepath.Join(t.TempDir(), "cert.pem")
	_, base := newTestServer(t, func(c *Config) { c.TLSSelfSigned = pemFile })
	if !strings.HasPrefix(base, "https://127.0.0.1:") {
		t.Fatalf("URL %s", base)
	}
	pem, err := os.ReadFile(pemFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", pemFile)
	}
	for _, h2 := range []bool{false, true} {
		var p http.Protocols
		p.SetHTTP1(!h2)
		p.SetHTTP2(h2)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, Protocols: &p}}
		resp, err := c.Get(base + "/v1/models")
		if err != nil {
			t.Fatalf("h2 %v: %v", h2, err)
		}
		resp.Body.Close()
		if want := map[bool]int{false: 1, true: 2}[h2]; resp.StatusCode != 200 || resp.ProtoMajor != want {
			t.Errorf("h2 %v: %d over HTTP/%d", h2, resp.StatusCode, resp.ProtoMajor)
		}
		c.CloseIdleConnections()
	}
	if _, err := http.Get(base + "/v1/models"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the certificate: %v", err)
	}
}

// The TLS flags are refused when incomplete or mixed, and a key pair that
// does not load is named.
func TestTLSConfigRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not pem"), 0o644)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{TLSCert: bad}, "give both"},
		{Config{TLSSelfSigned: filepath.Join(dir, "c.pem"), TLSCert: bad, TLSKey: bad}, "not both"},
		{Config{TLSCert: bad, TLSKey: bad}, "--tls-cert/--tls-key:"},
		{Config{TLSSelfSigned: filepath.Join(dir, "no", "such", "dir", "c.pem")}, "--tls-self-signed:"},
	} {
		if _, err := c.cfg.tlsConfig(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if tc, err := (&Config{}).tlsConfig(); tc != nil || err != nil {
		t.Errorf("no TLS flags: %v %v", tc, err)
	}
}
