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

// PKI is a throwaway CA with a server certificate for 127.0.0.1 and
// localhost and a client certificate it signed, as PEM files.
type PKI struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// NewPKI writes a CA named name and the certificates it signed into dir,
// each file's name starting with name.
func NewPKI(t *testing.T, dir, name string) PKI {
	t.Helper()
	now := time.Now()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p := PKI{CA: filepath.Join(dir, name+"-ca.pem")}
	writePEM(t, p.CA, "CERTIFICATE", caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
		key := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		certFile, keyFile = filepath.Join(dir, name+"-"+cn+".pem"), filepath.Join(dir, name+"-"+cn+"-key.pem")
		writePEM(t, certFile, "CERTIFICATE", der)
		writePEM(t, keyFile, "EC PRIVATE KEY", kder)
		return certFile, keyFile
	}
	p.ServerCert, p.ServerKey = leaf(2, "server", x509.ExtKeyUsageServerAuth)
	p.ClientCert, p.ClientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth)
	return p
}

// NewWebTLS writes a fresh CA (NewPKI), its server certificate for
// 127.0.0.1 and localhost, and a web configuration file serving that
// certificate to basic auth user with password (stored as its bcrypt
// hash), into a temporary directory of t.
func NewWebTLS(t *testing.T, user, password string) WebTLS {
	t.Helper()
	dir := t.TempDir()
	p := NewPKI(t, dir, "web")
	// The names a Kubernetes TLS Secret's keys have (the chart mounts one).
	for from, to := range map[string]string{p.CA: "ca.crt", p.ServerCert: "tls.crt", p.ServerKey: "tls.key"} {
		if err := os.Rename(from, filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	w := WebTLS{Config: filepath.Join(dir, "web-config.yml"), CAFile: filepath.Join(dir, "ca.crt"), User: user, Password: password}
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
