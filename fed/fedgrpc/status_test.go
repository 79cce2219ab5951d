package fedgrpc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fedtopic/fedtopic/fed"
)

// TestStatusMapping checks that every protocol error crosses the wire as
// its status code and comes back as the same error.
func TestStatusMapping(t *testing.T) {
	for _, m := range mapping {
		t.Run(m.reason, func(t *testing.T) {
			sent := toStatus(fmt.Errorf("fed: something: %w", m.err))
			if got := status.Code(sent); got != m.code {
				t.Errorf("toStatus(%v) code = %v; want %v", m.err, got, m.code)
			}
			back := fromStatus(context.Background(), "call", sent)
			if !errors.Is(back, m.err) {
				t.Errorf("fromStatus(toStatus(%v)) = %v; want it to wrap %v", m.err, back, m.err)
			}
			for _, o := range mapping {
				if o.err != m.err && errors.Is(back, o.err) {
					t.Errorf("fromStatus(toStatus(%v)) also matches %v", m.err, o.err)
				}
			}
		})
	}
	tests := []struct {
		name string
		in   error
		want error
	}{
		{name: "transport failure", in: status.Error(codes.Unavailable, "connection refused"), want: fed.ErrUnavailable},
		{name: "grpc size limit", in: status.Error(codes.ResourceExhausted, "message larger than max"), want: fed.ErrTooLarge},
		{name: "bad certificate", in: status.Error(codes.Unauthenticated, "no certificate"), want: fed.ErrPermissionDenied},
		{name: "not a status", in: errors.New("broken pipe"), want: fed.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fromStatus(context.Background(), "call", tt.in); !errors.Is(got, tt.want) {
				t.Errorf("fromStatus(%v) = %v; want it to wrap %v", tt.in, got, tt.want)
			}
		})
	}
	if got := status.Code(toStatus(errors.New("boom"))); got != codes.Internal {
		t.Errorf("toStatus(unknown error) code = %v; want Internal", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := fromStatus(ctx, "call", status.Error(codes.Canceled, "x")); !errors.Is(got, context.Canceled) {
		t.Errorf("fromStatus with a canceled context = %v; want context.Canceled", got)
	}
}
