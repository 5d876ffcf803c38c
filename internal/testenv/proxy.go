package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Proxy is a tinyproxy of the test's own, listening on loopback.
type Proxy struct {
	URL string // http://127.0.0.1:port
	log string
}

// Log is what the proxy has logged so far: a "CONNECT ... Established
// connection to host" line for each connection it made to a server.
func (p *Proxy) Log() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// StartTinyproxy runs Debian's tinyproxy in the foreground for the rest
// of t, or skips t without one (see tinyproxyPath).
func StartTinyproxy(t testing.TB) *Proxy {
	t.Helper()
	bin := tinyproxyPath(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	p := &Proxy{URL: "http://" + addr, log: filepath.Join(dir, "tinyproxy.log")}
	// No ConnectPort line: CONNECT to any port (a test server's).
	conf := fmt.Sprintf("Port %s\nListen 127.0.0.1\nTimeout 600\nAllow 127.0.0.1\nLogLevel Info\nLogFile %q\nMaxClients 1000\n", port, p.log)
	if err := os.WriteFile(filepath.Join(dir, "tinyproxy.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-d", "-c", filepath.Join(dir, "tinyproxy.conf"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting tinyproxy: %v", err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("tinyproxy did not listen on %s within 30 s: %v\n%s", addr, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// HostIP is an IPv4 address of this machine's other than loopback: a
// server there is reached through a proxy (Go never proxies loopback). It
// skips t on a machine without one, unless BENCHSERVE_PROXY=1.
func HostIP(t testing.TB) string {
	t.Helper()
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	msg := "no IPv4 address other than loopback to reach through a proxy"
	if required(t, ProxyVar) {
		t.Fatalf("%s=1 but %s", ProxyVar, msg)
	}
	t.Skip(msg)
	return ""
}
