package fed_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

func TestJoinChecks(t *testing.T) {
	sc := fedtest.Scenario{Parties: 2}
	coord, err := fed.NewCoordinator(sc.CoordinatorConfig(), sc.Aggregator(t), sc.Validator(t), fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good := fed.JoinRequest{Run: fedtest.RunID, Party: "p1", Algorithm: fedtest.SumName, Protocol: fed.ProtocolVersion}
	tests := []struct {
		name string
		edit func(*fed.JoinRequest)
		peer string
		want error
	}{
		{name: "valid", edit: func(*fed.JoinRequest) {}},
		{name: "valid with peer", edit: func(*fed.JoinRequest) {}, peer: "p1"},
		{name: "other algorithm", edit: func(r *fed.JoinRequest) { r.Algorithm = "ftm" }, want: fed.ErrAlgorithmMismatch},
		{name: "other protocol", edit: func(r *fed.JoinRequest) { r.Protocol = 2 }, want: fed.ErrAlgorithmMismatch},
		{name: "unknown run", edit: func(r *fed.JoinRequest) { r.Run = "x" }, want: fed.ErrUnknownRun},
		{name: "unknown party", edit: func(r *fed.JoinRequest) { r.Party = "p7" }, want: fed.ErrUnknownParty},
		{name: "claims another party", edit: func(*fed.JoinRequest) {}, peer: "p2", want: fed.ErrPermissionDenied},
		{name: "empty", edit: func(r *fed.JoinRequest) { *r = fed.JoinRequest{} }, want: fed.ErrInvalidMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := good
			tt.edit(&req)
			ctx := context.Background()
			if tt.peer != "" {
				ctx = fed.WithPeer(ctx, tt.peer)
			}
			rep, err := coord.Join(ctx, &req)
			if !errors.Is(err, tt.want) || (err == nil && (rep.Parties != 2 || rep.Algorithm != fedtest.SumName)) {
				t.Errorf("Join(%+v) = %+v, %v; want error %v", req, rep, err, tt.want)
			}
		})
	}
	if got := coord.Parties()[0].Status; got != fed.Joined {
		t.Errorf("p1 status after Join = %v; want joined", got)
	}
}

// TestPartyChecksFederationSize checks that a party set up for another
// number of parties than the run has stops at the join.
func TestPartyChecksFederationSize(t *testing.T) {
	sc := fedtest.Scenario{Parties: 2}
	coord, err := fed.NewCoordinator(sc.CoordinatorConfig(), sc.Aggregator(t), sc.Validator(t), fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := inproc.New(coord, inproc.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := fedtest.OpenLedger(100, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := sc.PartyConfig(0)
	cfg.Parties = 3
	p, err := fed.NewParty(cfg, sc.Learner(t, 0), ledger, n.Dial("p1"), fed.PartyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.Run(ctx); !errors.Is(err, fed.ErrAlgorithmMismatch) || !strings.Contains(err.Error(), "2 parties") {
		t.Errorf("Run of a party set up for 3 parties in a run of 2: %v; want %v naming both sizes", err, fed.ErrAlgorithmMismatch)
	}
}
