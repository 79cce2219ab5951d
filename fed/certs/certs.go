package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
)

// Role says what a certificate is for.
type Role int

// Certificate roles.
const (
	Party       Role = iota // client authentication only
	Coordinator             // server authentication only
)

// CA is a certificate authority held in memory.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte // the CA certificate, PEM-encoded
}

// NewCA makes a self-signed CA named name, valid from notBefore to notAfter.
func NewCA(name string, notBefore, notAfter time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certs: CA key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"fedtopic federation"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("certs: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certs: CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Issue makes a certificate for name in role, valid from notBefore to
// notAfter, signed by ca. A party's name is its common name and DNS name;
// a coordinator's hosts (DNS names or IP addresses) are its subject
// alternative names. It returns the certificate and its private key as PEM.
func (ca *CA) Issue(name string, role Role, hosts []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	if name == "" {
		return nil, nil, errors.New("certs: empty name")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s key: %w", name, err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"fedtopic federation"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	switch role {
	case Party:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		tmpl.DNSNames = []string{name}
	case Coordinator:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	default:
		return nil, nil, fmt.Errorf("certs: unknown role %d", role)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s certificate: %w", name, err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s key: %w", name, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

// serialNumber returns a random 128-bit certificate serial number.
func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("certs: serial number: %w", err)
	}
	return n, nil
}

// DefaultHosts returns the names a development coordinator certificate is
// valid for when Options.Hosts is empty: localhost, coordinator, 127.0.0.1
// and ::1.
func DefaultHosts() []string { return []string{"localhost", "coordinator", "127.0.0.1", "::1"} }

// DefaultValidity is how long certificates made by WriteDir stay valid when
// Options.Validity is zero.
const DefaultValidity = 365 * 24 * time.Hour

// Options says what WriteDir makes. The zero value of a field means the
// default in its comment.
type Options struct {
	Parties  []string      // party identities; at least one
	Hosts    []string      // coordinator's DNS names and IPs; default DefaultHosts()
	Validity time.Duration // default DefaultValidity
	Now      time.Time     // start of validity; default time.Now()
}

// Validate reports every problem with o.
func (o *Options) Validate() error {
	var errs []error
	if len(o.Parties) == 0 {
		errs = append(errs, errors.New("certs: no parties"))
	}
	for i, p := range o.Parties {
		switch {
		case !validName(p):
			errs = append(errs, fmt.Errorf("certs: party %d: %q is not a valid name (letters, digits, '-', '_' and '.', at most 64)", i+1, p))
		case p == "ca" || p == "coordinator":
			errs = append(errs, fmt.Errorf("certs: party %d: %q is reserved", i+1, p))
		case slices.Contains(o.Parties[:i], p):
			errs = append(errs, fmt.Errorf("certs: party %d: duplicate %q", i+1, p))
		}
	}
	if o.Validity < 0 {
		errs = append(errs, fmt.Errorf("certs: validity %v < 0", o.Validity))
	}
	return errors.Join(errs...)
}

// validName reports whether s can name a party and its files.
func validName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// WriteDir makes a CA, a coordinator certificate and one certificate per
// party and writes them to dir: ca.pem, coordinator.pem,
// coordinator-key.pem, and NAME.pem, NAME-key.pem per party. Keys are
// written with mode 0600.
func WriteDir(dir string, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	hosts := o.Hosts
	if len(hosts) == 0 {
		hosts = DefaultHosts()
	}
	validity := o.Validity
	if validity == 0 {
		validity = DefaultValidity
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	nb, na := now.Add(-time.Hour), now.Add(validity)
	ca, err := NewCA("fedtopic development CA", nb, na)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	write := func(name string, perm os.FileMode, data []byte) error {
		if err := atomicfile.WriteBytes(filepath.Join(dir, name), perm, data); err != nil {
			return fmt.Errorf("certs: %w", err)
		}
		return nil
	}
	if err := write("ca.pem", 0o644, ca.PEM); err != nil {
		return err
	}
	type subject struct {
		name string
		role Role
	}
	subjects := []subject{{"coordinator", Coordinator}}
	for _, p := range o.Parties {
		subjects = append(subjects, subject{p, Party})
	}
	for _, s := range subjects {
		cert, key, err := ca.Issue(s.name, s.role, hosts, nb, na)
		if err != nil {
			return err
		}
		if err := write(s.name+".pem", 0o644, cert); err != nil {
			return err
		}
		if err := write(s.name+"-key.pem", 0o600, key); err != nil {
			return err
		}
	}
	return nil
}
