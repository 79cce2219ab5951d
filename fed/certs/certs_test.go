package certs_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/fed/certs"
)

func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	if err := certs.WriteDir(dir, certs.Options{Parties: []string{"p1", "p2", "p3"}, Now: now}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(read("ca.pem")) {
		t.Fatal("ca.pem holds no certificate")
	}
	tests := []struct {
		name  string
		usage x509.ExtKeyUsage
		other x509.ExtKeyUsage
	}{
		{"coordinator", x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		{"p1", x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		{"p2", x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		{"p3", x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := tls.X509KeyPair(read(tt.name+".pem"), read(tt.name+"-key.pem"))
			if err != nil {
				t.Fatalf("X509KeyPair(%s): %v", tt.name, err)
			}
			leaf := kp.Leaf
			if leaf.Subject.CommonName != tt.name {
				t.Errorf("common name %q; want %q", leaf.Subject.CommonName, tt.name)
			}
			at := now.Add(time.Hour)
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{tt.usage}}); err != nil {
				t.Errorf("verify for its own use: %v", err)
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{tt.other}}); err == nil {
				t.Error("verifies for the other role too; want it refused")
			}
			if fi, err := os.Stat(filepath.Join(dir, tt.name+"-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("key file mode %v, %v; want 0600", fi.Mode().Perm(), err)
			}
		})
	}
	kp, _ := tls.X509KeyPair(read("coordinator.pem"), read("coordinator-key.pem"))
	if err := kp.Leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("coordinator certificate for 127.0.0.1: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"ca.pem", "coordinator-key.pem", "coordinator.pem", "p1-key.pem", "p1.pem", "p2-key.pem", "p2.pem", "p3-key.pem", "p3.pem"}
	if !slices.Equal(names, want) {
		t.Errorf("files %v; want %v", names, want)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts certs.Options
		want []string
	}{
		{name: "valid", opts: certs.Options{Parties: []string{"p1", "hospital-a", "bank_2"}}},
		{name: "none", opts: certs.Options{}, want: []string{"no parties"}},
		{name: "bad names", opts: certs.Options{Parties: []string{"../x", "coordinator", "p1", "p1", ""}}, want: []string{`"../x" is not a valid name`, `"coordinator" is reserved`, `duplicate "p1"`, `"" is not a valid name`}},
		{name: "negative validity", opts: certs.Options{Parties: []string{"p1"}, Validity: -time.Hour}, want: []string{"validity -1h0m0s < 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if len(tt.want) == 0 && err != nil {
				t.Errorf("Validate() = %v; want nil", err)
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v; want it to mention %s", err, w)
				}
			}
		})
	}
}
