package fedgrpc

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// ServerTLS returns the coordinator's TLS configuration: TLS 1.3 only, its
// certificate, and client certificates required and verified against the
// federation CA.
func ServerTLS(caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	pool, cert, err := material(caPEM, certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}, nil
}

// ClientTLS returns a party's TLS configuration: TLS 1.3 only, its client
// certificate, and the coordinator verified against the federation CA under
// serverName (empty: the host of the address dialed).
func ClientTLS(caPEM, certPEM, keyPEM []byte, serverName string) (*tls.Config, error) {
	pool, cert, err := material(caPEM, certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ServerName:   serverName,
	}, nil
}

// LoadServerTLS is ServerTLS on PEM files.
func LoadServerTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	ca, cert, key, err := readPEM(caFile, certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return ServerTLS(ca, cert, key)
}

// LoadClientTLS is ClientTLS on PEM files.
func LoadClientTLS(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	ca, cert, key, err := readPEM(caFile, certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return ClientTLS(ca, cert, key, serverName)
}

func readPEM(caFile, certFile, keyFile string) (ca, cert, key []byte, err error) {
	var errs []error
	read := func(name, path string) []byte {
		if path == "" {
			errs = append(errs, fmt.Errorf("fedgrpc: no %s file given", name))
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("fedgrpc: %s: %w", name, err))
		}
		return b
	}
	ca, cert, key = read("CA certificate", caFile), read("certificate", certFile), read("key", keyFile)
	return ca, cert, key, errors.Join(errs...)
}

func material(caPEM, certPEM, keyPEM []byte) (*x509.CertPool, tls.Certificate, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, tls.Certificate{}, errors.New("fedgrpc: no CA certificate in the CA PEM")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("fedgrpc: certificate and key: %w", err)
	}
	return pool, cert, nil
}

// identity returns the party identity of a verified client certificate: its
// common name.
func identity(state tls.ConnectionState) (string, error) {
	if len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return "", errors.New("no verified client certificate")
	}
	cn := state.VerifiedChains[0][0].Subject.CommonName
	if cn == "" {
		return "", errors.New("client certificate has no common name")
	}
	return cn, nil
}
