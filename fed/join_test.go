package fed_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
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
