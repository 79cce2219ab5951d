package fedgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/certs"
	"github.com/fedtopic/fedtopic/fed/fedgrpc"
	"github.com/fedtopic/fedtopic/fed/fedtest"
)

// Example serves a coordinator over mutual TLS on loopback and joins it
// as party p1.
func Example() {
	now := time.Now()
	ca, _ := certs.NewCA("example CA", now.Add(-time.Hour), now.Add(time.Hour))
	srvCert, srvKey, _ := ca.Issue("coordinator", certs.Coordinator, []string{"127.0.0.1"}, now.Add(-time.Hour), now.Add(time.Hour))
	p1Cert, p1Key, _ := ca.Issue("p1", certs.Party, nil, now.Add(-time.Hour), now.Add(time.Hour))

	sc := fedtest.Scenario{Parties: 2}
	setup := sc.Setup()
	agg, _ := fedtest.Sum.NewAggregator(setup)
	val, _ := fedtest.Sum.NewValidator(setup)
	coord, _ := fed.NewCoordinator(sc.CoordinatorConfig(), agg, val, fed.CoordinatorOptions{})

	stls, _ := fedgrpc.ServerTLS(ca.PEM, srvCert, srvKey)
	srv, err := fedgrpc.NewServer(coord, fedgrpc.ServerConfig{TLS: stls, Parties: setup.Parties,
		MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
	if err != nil {
		fmt.Println(err)
		return
	}
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(lis) })
	defer func() { srv.Stop(); wg.Wait() }()

	ctls, _ := fedgrpc.ClientTLS(ca.PEM, p1Cert, p1Key, "127.0.0.1")
	conn, err := fedgrpc.Dial(lis.Addr().String(), fedgrpc.ClientConfig{TLS: ctls,
		MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	reply, err := conn.Join(context.Background(), &fed.JoinRequest{Run: setup.Run, Party: "p1", Algorithm: fedtest.SumName, Protocol: fed.ProtocolVersion})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("p1 joined %s with %d parties\n", reply.Run, reply.Parties)
	_, err = conn.Join(context.Background(), &fed.JoinRequest{Run: setup.Run, Party: "p2", Algorithm: fedtest.SumName, Protocol: fed.ProtocolVersion})
	fmt.Println("p1 claiming p2 is refused:", errors.Is(err, fed.ErrPermissionDenied))
	// Output:
	// p1 joined fedtest-run with 2 parties
	// p1 claiming p2 is refused: true
}
