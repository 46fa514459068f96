package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// WebTLS is a web configuration file in the exporter-toolkit's format
// (--web.config.file) with what it refers to, all in one temporary
// directory.
type WebTLS struct {
	// Config is the web configuration file: the server's certificate and
	// key, and one basic auth user.
	Config string
	// CAFile is the PEM certificate of the CA that signed the server's
	// certificate, for the client (Prometheus' tls_config ca_file).
	CAFile string
	// User and Password are the basic auth user's credentials, in clear.
	User, Password string
}

// NewWebTLS writes a fresh self-signed CA, a server certificate it signed
// for 127.0.0.1 and localhost, and a web configuration file serving that
// certificate to basic auth user with password (stored as its bcrypt
// hash), into a temporary directory of t.
func NewWebTLS(t *testing.T, user, password string) WebTLS {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "etcdbench test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey := newKey(t)
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "etcdbench exporter"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	w := WebTLS{Config: filepath.Join(dir, "web-config.yml"), CAFile: filepath.Join(dir, "ca.crt"), User: user, Password: password}
	writePEM(t, w.CAFile, "CERTIFICATE", caDER)
	writePEM(t, filepath.Join(dir, "tls.crt"), "CERTIFICATE", srvDER)
	writePEM(t, filepath.Join(dir, "tls.key"), "EC PRIVATE KEY", srvKeyDER)
	// Relative paths: the toolkit reads them from the file's directory.
	conf := fmt.Sprintf("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  %s: %s\n", user, hash)
	if err := os.WriteFile(w.Config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
