package main

import "github.com/spf13/cobra"

// newCompareCmd is experiment compare: every method at one document-level
// privacy budget against each party alone and the pooled model.
func newCompareCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "compare",
		Short: "Every method calibrated to one document-level ε, against each party alone and the pooled model",
		Args:  noArgs,
		RunE:  func(*cobra.Command, []string) error { return usagef("experiment compare: not yet available") },
	}
}
