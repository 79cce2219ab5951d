package fedgrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
)

// errKilled is what a killed party's connection returns.
var errKilled = errors.New("party process killed")

// killAfter is a party's connection that is closed for good right after
// its n-th submission was delivered, as when the party's process dies.
type killAfter struct {
	fed.Protocol
	closer io.Closer
	n      int
	mu     sync.Mutex
	calls  int
}

func (k *killAfter) Submit(ctx context.Context, s *fed.Submission) (*fed.Receipt, error) {
	k.mu.Lock()
	k.calls++
	calls := k.calls
	k.mu.Unlock()
	if calls > k.n {
		return nil, errKilled
	}
	r, err := k.Protocol.Submit(ctx, s)
	if calls == k.n {
		k.closer.Close()
		return nil, errKilled
	}
	return r, err
}

func (k *killAfter) Next(ctx context.Context, r *fed.TaskRequest) (*fed.Task, error) {
	k.mu.Lock()
	dead := k.calls >= k.n
	k.mu.Unlock()
	if dead {
		return nil, errKilled
	}
	return k.Protocol.Next(ctx, r)
}

// TestSecureAggregationPartyKilled runs secure aggregation over gRPC with
// mutual TLS on loopback, n = 5, t = 3: party p3's connection is dropped
// right after it sent its masked vector, before unmasking. The round still
// ends with the exact sum of all five vectors (p3's self mask is removed
// with its peers' shares), and the next round sums the four left.
func TestSecureAggregationPartyKilled(t *testing.T) {
	p := fedtest.IntSumParams{Len: 32, Rounds: 2, Max: 1 << 20}
	raw, _ := json.Marshal(p)
	ids := []string{"p1", "p2", "p3", "p4", "p5"}
	setup := fed.Setup{Run: "secure-grpc", Parties: ids, Seed: 9, Params: raw}
	a, err := fedtest.IntSum.NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	val, _ := fedtest.IntSum.NewValidator(setup)
	sa := &fed.SecureAggregation{Threshold: 3}
	coord, err := fed.NewCoordinator(fed.CoordinatorConfig{Run: setup.Run, Algorithm: fedtest.IntSumName, Parties: ids,
		RoundTimeout: fed.Duration(1500 * time.Millisecond), SecureAggregation: sa}, a, val, fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dial, stop, err := fedtest.Loopback().Connect(coord, ids, val)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(ids))
	for i, id := range ids {
		conn, err := dial(id)
		if err != nil {
			t.Fatal(err)
		}
		if id == "p3" {
			conn = &killAfter{Protocol: conn, closer: conn.(io.Closer), n: 3} // submission 3 is the masked vector
		}
		l, _ := fedtest.IntSum.NewLearner(setup, i, nil)
		party, err := fed.NewParty(fed.PartyConfig{Run: setup.Run, ID: id, Algorithm: fedtest.IntSumName, SecureAggregation: sa,
			RetryMin: fed.Duration(10 * time.Millisecond)}, l, nil, conn, fed.PartyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _, errs[i] = party.Run(ctx) })
	}
	_, err = coord.Run(ctx)
	wg.Wait()
	if err != nil {
		t.Fatalf("coordinator: %v", err)
	}
	for i, err := range errs {
		if want := ids[i] == "p3"; (err != nil) != want || (want && !errors.Is(err, errKilled)) {
			t.Errorf("party %s: %v", ids[i], err)
		}
	}
	agg := a.(*fedtest.IntSumAggregator)
	wantIncluded := [][]string{ids, {"p1", "p2", "p4", "p5"}}
	if !slices.EqualFunc(agg.Included, wantIncluded, slices.Equal) {
		t.Fatalf("included %v; want %v", agg.Included, wantIncluded)
	}
	for k, r := range agg.Rounds {
		want := make([]int64, p.Len)
		for _, id := range agg.Included[k] {
			for j, x := range fedtest.IntSumVector(p, setup.Seed, id, r) {
				want[j] += x
			}
		}
		if !slices.Equal(agg.Sums[k], want) {
			t.Errorf("round %d: sum %v; want %v", r, fmt.Sprint(agg.Sums[k]), want)
		}
	}
}
