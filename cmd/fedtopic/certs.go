package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/fed/certs"
)

func newCertsCmd(e *env) *cobra.Command {
	var (
		out      string
		parties  []string
		hosts    []string
		validity time.Duration
	)
	cmd := &cobra.Command{
		Use:   "certs --out DIR --parties p1,p2,p3",
		Short: "Make a development CA and certificates for a federation's coordinator and parties",
		Long: `certs makes a private certificate authority and, signed by it, a server
certificate for the coordinator and a client certificate for each party
(ECDSA P-256), for fedtopic coordinator and fedtopic party, which speak
gRPC over mutual TLS 1.3. A party's identity is its certificate's common
name: the coordinator accepts only parties in its allow-list, and only
messages that claim the party the certificate names.

It writes DIR/ca.pem, DIR/coordinator.pem, DIR/coordinator-key.pem and, per
party, DIR/ID.pem and DIR/ID-key.pem (keys with mode 0600). The CA's key is
not kept: to add a party, make a new set. For development and tests; a real
consortium uses its own PKI.`,
		Example: `  fedtopic certs --out certs --parties p1,p2,p3
  fedtopic certs --out certs --parties hospital-a,hospital-b --hosts coordinator.example.org,10.0.0.5 --validity 720h`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out is required: the directory to write the certificates to")
			}
			o := certs.Options{Parties: parties, Hosts: hosts, Validity: validity}
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			if err := certs.WriteDir(out, o); err != nil {
				return err
			}
			if len(hosts) == 0 {
				hosts = certs.DefaultHosts()
			}
			fmt.Fprintf(e.stdout, "wrote %s: ca.pem, coordinator.pem (for %v), and certificates for %d parties\n", out, hosts, len(parties))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out", "", "directory to write the PEM files to (required)")
	fs.StringSliceVar(&parties, "parties", nil, "party identities, comma-separated (required)")
	fs.StringSliceVar(&hosts, "hosts", nil, "DNS names and IP addresses the coordinator's certificate is valid for (default localhost,coordinator,127.0.0.1,::1)")
	fs.DurationVar(&validity, "validity", certs.DefaultValidity, "how long the certificates stay valid")
	return cmd
}
