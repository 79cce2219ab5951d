package fedtest

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/certs"
	"github.com/fedtopic/fedtopic/fed/fedgrpc"
)

// Loopback returns the gRPC transport over TCP on 127.0.0.1 with mutual TLS:
// a fresh development CA, a coordinator certificate for 127.0.0.1 and one
// client certificate per party.
func Loopback() Transport { return loopback{} }

type loopback struct{}

func (loopback) String() string { return "grpc-loopback" }

func (loopback) Connect(svc fed.Service, parties []string, val fed.Validator) (func(string) (fed.Protocol, error), func(), error) {
	now := time.Now()
	pki, err := NewPKI(now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		return nil, nil, err
	}
	stls, err := fedgrpc.ServerTLS(pki.CA.PEM, pki.Coordinator.Cert, pki.Coordinator.Key)
	if err != nil {
		return nil, nil, err
	}
	srv, err := fedgrpc.NewServer(svc, fedgrpc.ServerConfig{TLS: stls, Parties: parties,
		MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
	if err != nil {
		return nil, nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(lis) })
	var mu sync.Mutex
	var clients []*fedgrpc.Client
	dial := func(party string) (fed.Protocol, error) {
		kp, err := pki.Issue(party, certs.Party, now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			return nil, err
		}
		ctls, err := fedgrpc.ClientTLS(pki.CA.PEM, kp.Cert, kp.Key, "127.0.0.1")
		if err != nil {
			return nil, err
		}
		c, err := fedgrpc.Dial(lis.Addr().String(), fedgrpc.ClientConfig{TLS: ctls,
			MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		clients = append(clients, c)
		mu.Unlock()
		return c, nil
	}
	stop := func() {
		mu.Lock()
		for _, c := range clients {
			c.Close()
		}
		mu.Unlock()
		srv.Stop()
		wg.Wait()
	}
	return dial, stop, nil
}

// KeyPair is a certificate and its private key, PEM-encoded.
type KeyPair struct{ Cert, Key []byte }

// PKI is a federation's development certificate authority with a
// coordinator certificate for 127.0.0.1 and localhost.
type PKI struct {
	CA          *certs.CA
	Coordinator KeyPair
}

// NewPKI makes a CA and a coordinator certificate valid from notBefore to
// notAfter.
func NewPKI(notBefore, notAfter time.Time) (*PKI, error) {
	ca, err := certs.NewCA("fedtest CA", notBefore, notAfter)
	if err != nil {
		return nil, err
	}
	p := &PKI{CA: ca}
	p.Coordinator, err = p.Issue("coordinator", certs.Coordinator, notBefore, notAfter)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Issue makes a certificate for name in role, valid from notBefore to
// notAfter.
func (p *PKI) Issue(name string, role certs.Role, notBefore, notAfter time.Time) (KeyPair, error) {
	if p == nil || p.CA == nil {
		return KeyPair{}, errors.New("fedtest: no CA")
	}
	c, k, err := p.CA.Issue(name, role, []string{"127.0.0.1", "localhost"}, notBefore, notAfter)
	if err != nil {
		return KeyPair{}, fmt.Errorf("fedtest: issue %s: %w", name, err)
	}
	return KeyPair{Cert: c, Key: k}, nil
}
