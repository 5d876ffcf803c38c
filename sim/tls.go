package sim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// tlsConfig is the TLS the simulator serves with: the key pair of
// TLSCert and TLSKey, or a self-signed certificate for the loopback
// names and Host, whose PEM is written to TLSSelfSigned for the client's
// --cacert; nil for none (cleartext).
func (c *Config) tlsConfig() (*tls.Config, error) {
	switch {
	case c.TLSSelfSigned != "" && (c.TLSCert != "" || c.TLSKey != ""):
		return nil, errors.New("--tls-self-signed: give it or --tls-cert and --tls-key, not both")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return nil, errors.New("--tls-cert and --tls-key: give both (the certificate and its private key, PEM)")
	case c.TLSCert != "":
		pair, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{pair}}, nil
	case c.TLSSelfSigned != "":
		pair, certPEM, err := SelfSigned(c.Host)
		if err != nil {
			return nil, fmt.Errorf("--tls-self-signed: %w", err)
		}
		if err := os.WriteFile(c.TLSSelfSigned, certPEM, 0o644); err != nil {
			return nil, fmt.Errorf("--tls-self-signed: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{pair}}, nil
	}
	return nil, nil
}

// SelfSigned makes a certificate, valid for a day, for localhost,
// 127.0.0.1, ::1 and host (a name or an address; "" or a wildcard adds
// nothing), and returns it with its PEM (what a client trusts).
func SelfSigned(host string) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "benchserve sim"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	} else if ip == nil && host != "" && host != "localhost" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certPEM, nil
}
