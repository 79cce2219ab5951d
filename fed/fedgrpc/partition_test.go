package fedgrpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/certs"
	"github.com/fedtopic/fedtopic/fed/fedgrpc"
	"github.com/fedtopic/fedtopic/fed/fedtest"
)

// proxy is a TCP proxy on loopback that can partition the network: cut
// closes every proxied connection and refuses new ones until heal.
type proxy struct {
	lis    net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns []net.Conn
	wg    sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{lis: lis, target: target}
	p.wg.Go(p.serve)
	return p
}

func (p *proxy) addr() string { return p.lis.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		p.wg.Go(func() { pipe(up, c) })
		p.wg.Go(func() { pipe(c, up) })
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) heal() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *proxy) close() {
	p.lis.Close()
	p.cut()
	p.wg.Wait()
}

// gatedLearner holds its round-3 update until back is closed (at most
// 20 s), so round 3 stays open until the cut-off party is back.
type gatedLearner struct {
	*fedtest.SumLearner
	back <-chan struct{}
}

func (l gatedLearner) Learn(round int, broadcast []byte) (fed.Step, error) {
	if round == 3 {
		select {
		case <-l.back:
		case <-time.After(20 * time.Second):
		}
	}
	return l.SumLearner.Learn(round, broadcast)
}

// signalLearner closes back when it first learns a round after the second.
type signalLearner struct {
	*fedtest.SumLearner
	once *sync.Once
	back chan struct{}
}

func (l signalLearner) Learn(round int, broadcast []byte) (fed.Step, error) {
	if round >= 3 {
		l.once.Do(func() { close(l.back) })
	}
	return l.SumLearner.Learn(round, broadcast)
}

// TestPartition checks a network partition and its healing: party p3 reaches the coordinator
// through a TCP proxy that drops all its traffic from the commit of round 1
// to the commit of round 2. Round 2 commits with p1 and p2 (quorum 2) as
// soon as the coordinator has lost p3's connection (at the latest at the
// round's deadline), p3 marked dropped; once the network heals, p3
// reconnects by itself (its connection's retry backoff) and takes part in a
// later round, and every party and the coordinator finish the run. The
// other parties hold their round-3 updates until p3 has its round-3 task,
// so p3 need only reconnect within round 3's deadline (3 s; it takes
// milliseconds), not before the other parties finish the run.
func TestPartition(t *testing.T) {
	sc := fedtest.Scenario{Parties: 3, Rounds: 4, MinParties: 2, RoundTimeout: 3 * time.Second, Seed: 17}
	setup := sc.Setup()
	val := sc.Validator(t)
	now := time.Now()
	pki, err := fedtest.NewPKI(now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	stls, err := fedgrpc.ServerTLS(pki.CA.PEM, pki.Coordinator.Cert, pki.Coordinator.Key)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := newProxy(t, lis.Addr().String())
	defer px.close()

	var mu sync.Mutex
	var records []fed.RoundRecord
	coord, err := fed.NewCoordinator(sc.CoordinatorConfig(), sc.Aggregator(t), val, fed.CoordinatorOptions{
		OnRound: func(r fed.RoundRecord) {
			mu.Lock()
			records = append(records, r)
			mu.Unlock()
			switch {
			case r.Round == 1 && r.Committed:
				px.cut()
			case r.Round == 2 && r.Committed:
				px.heal()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fedgrpc.NewServer(coord, fedgrpc.ServerConfig{TLS: stls, Parties: setup.Parties,
		MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
	if err != nil {
		t.Fatal(err)
	}
	var serving sync.WaitGroup
	serving.Go(func() { srv.Serve(lis) })
	defer func() { srv.Stop(); serving.Wait() }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	back, backOnce := make(chan struct{}), sync.Once{}
	var wg sync.WaitGroup
	results := make([]*fed.PartyResult, sc.Parties)
	errs := make([]error, sc.Parties+1)
	for i, id := range setup.Parties {
		kp, err := pki.Issue(id, certs.Party, now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ctls, err := fedgrpc.ClientTLS(pki.CA.PEM, kp.Cert, kp.Key, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		target := lis.Addr().String()
		var opts []grpc.DialOption
		if id == "p3" {
			// Through the proxy, with a test-sized reconnect backoff in
			// place of the production one (1 s doubling to 20 s).
			target = px.addr()
			opts = append(opts, grpc.WithConnectParams(grpc.ConnectParams{
				Backoff: backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, MaxDelay: 200 * time.Millisecond}, MinConnectTimeout: time.Second}))
		}
		c, err := fedgrpc.Dial(target, fedgrpc.ClientConfig{TLS: ctls,
			MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ledger, err := fedtest.OpenLedger(0, "")
		if err != nil {
			t.Fatal(err)
		}
		var l fed.Learner = gatedLearner{sc.Learner(t, i), back}
		if id == "p3" {
			l = signalLearner{sc.Learner(t, i), &backOnce, back}
		}
		p, err := fed.NewParty(sc.PartyConfig(i), l, ledger, c, fed.PartyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { results[i], errs[i] = p.Run(ctx) })
	}
	var res *fed.Result
	wg.Go(func() { res, errs[sc.Parties] = coord.Run(ctx) })
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Rounds != sc.Rounds {
		t.Errorf("coordinator committed %d rounds; want %d", res.Rounds, sc.Rounds)
	}
	for i, r := range results {
		if r == nil || r.Rounds != sc.Rounds {
			t.Errorf("party %s finished with %+v; want %d rounds", setup.Parties[i], r, sc.Rounds)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var cutRound *fed.RoundRecord
	backRound := 0
	for i, r := range records {
		if !r.Committed {
			continue
		}
		switch {
		case r.Round == 2:
			cutRound = &records[i]
		case r.Round > 2 && slices.Contains(r.Replied, "p3"):
			backRound = max(backRound, r.Round)
		}
	}
	if cutRound == nil {
		t.Fatalf("no committed round 2 in %d records", len(records))
	}
	if slices.Contains(cutRound.Replied, "p3") || !slices.Contains(cutRound.Dropped, "p3") {
		t.Errorf("round 2 (p3 cut off): replied %v, dropped %v; want p3 dropped", cutRound.Replied, cutRound.Dropped)
	}
	if len(cutRound.Replied) != 2 {
		t.Errorf("round 2 replied %v; want p1 and p2", cutRound.Replied)
	}
	rejoined := slices.ContainsFunc(records, func(r fed.RoundRecord) bool { return slices.Contains(r.Rejoined, "p3") })
	if backRound == 0 || !rejoined {
		for _, r := range records {
			t.Logf("round %d attempt %d committed %v replied %v dropped %v rejoined %v", r.Round, r.Attempt, r.Committed, r.Replied, r.Dropped, r.Rejoined)
		}
		t.Errorf("after the network healed p3 replied last in round %d and rejoined: %v; want it back (rounds 3..%d)", backRound, rejoined, sc.Rounds)
	}
}
