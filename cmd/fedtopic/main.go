package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err))
}

// Exit codes scripts can rely on.
const (
	exitOK       = 0
	exitFailure  = 1 // the command ran and failed (bad input, I/O, ...)
	exitUsage    = 2 // the command line itself was wrong
	exitCanceled = 130
)

// usageError marks an error in the command line, reported with exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitCanceled
	default:
		return exitFailure
	}
}

// env is what every command gets: its output streams. Commands never touch
// os.Stdout or os.Stderr directly, so run is testable.
type env struct {
	stdout, stderr io.Writer
	profile        *os.File // the CPU profile being written (--cpuprofile), or nil
}

// run executes the fedtopic command line args and reports errors on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	e := &env{stdout: stdout, stderr: stderr}
	root := newRootCmd(e)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if e.profile != nil {
		pprof.StopCPUProfile()
		if cerr := e.profile.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("cpu profile: %w", cerr)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "fedtopic: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", commandPath(root, args))
		}
	}
	return err
}

// commandPath returns the full name of the subcommand args run, such as
// "fedtopic privacy pctd", or "fedtopic" if there is none.
func commandPath(root *cobra.Command, args []string) string {
	c, _, err := root.Find(args)
	if err != nil {
		return root.Name()
	}
	return c.CommandPath()
}

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "fedtopic",
		Short: "Federated, differentially private topic modeling",
		Long: `fedtopic trains topic models across organisations that cannot pool their text.
Raw text never leaves its owner; what leaves is differentially private and
its privacy cost is accounted and reported.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	var cpuProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file (read it with go tool pprof)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("cpu profile %s: %w", cpuProfile, err)
		}
		e.profile = f
		return nil
	}
	root.AddCommand(
		// one line per subcommand, in the order --help lists them
		newTrainCmd(e),
		newInferCmd(e),
		newEvalCmd(e),
		newTopicsCmd(e),
		newExportCmd(e),
		newPrivacyCmd(e),
		newReportCmd(e),
		newSimulateCmd(e),
		newCoordinatorCmd(e),
		newPartyCmd(e),
		newCertsCmd(e),
		newEmbedCmd(e),
		newExperimentCmd(e),
	)
	return root
}
