package main

import (
	"slices"
	"strings"
)

// secureMethodNames lists the methods whose update is a vector of sums,
// which can run under secure aggregation: their halves implement
// fed.SumLearner and fed.SumAggregator (TestSecureMethodsDeclareSums keeps
// the list honest).
func secureMethodNames() []string { return []string{"adlda", "fedlda", "fednmf", "pctd"} }

// checkSecureMethod refuses --secure-aggregation for a method whose update
// is not a vector of sums.
func checkSecureMethod(name string) error {
	ok := secureMethodNames()
	if slices.Contains(ok, name) {
		return nil
	}
	return usagef("--secure-aggregation: %s does not declare its update a vector of sums, so the coordinator cannot learn only the parties' sum; methods that can run under secure aggregation: %s", name, strings.Join(ok, ", "))
}
