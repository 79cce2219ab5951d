package inproc_test

import (
	"context"
	"fmt"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

// Example connects a party to a coordinator in the same process and asks
// for its first task; the request and the reply travel as encoded bytes.
func Example() {
	sc := fedtest.Scenario{Parties: 1, Rounds: 1}
	setup := sc.Setup()
	agg, _ := fedtest.Sum.NewAggregator(setup)
	val, _ := fedtest.Sum.NewValidator(setup)
	coord, _ := fed.NewCoordinator(sc.CoordinatorConfig(), agg, val, fed.CoordinatorOptions{})
	net, _ := inproc.New(coord, inproc.Faults{})
	conn := net.Dial("p1")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := coord.Run(ctx); done <- err }()
	defer func() { cancel(); <-done }()

	reply, err := conn.Join(ctx, &fed.JoinRequest{Run: setup.Run, Party: "p1", Algorithm: fedtest.SumName, Protocol: fed.ProtocolVersion})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("joined %s: %d party, algorithm %s\n", reply.Run, reply.Parties, reply.Algorithm)
	task, err := conn.Next(ctx, &fed.TaskRequest{Run: setup.Run, Party: "p1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("task: round %d attempt %d, %d-byte broadcast\n", task.Round, task.Attempt, len(task.Broadcast))
	// Output:
	// joined fedtest-run: 1 party, algorithm fedtest-sum
	// task: round 1 attempt 1, 328-byte broadcast
}
