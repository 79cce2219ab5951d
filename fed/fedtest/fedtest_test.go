package fedtest_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/privacy"
)

func TestDecodeMatrix(t *testing.T) {
	good := fedtest.EncodeMatrix(2, 3, []float64{0, 1, 2, 3, 4, 5})
	tests := []struct {
		name string
		b    []byte
		ok   bool
	}{
		{name: "good", b: good, ok: true},
		{name: "no header", b: good[:4]},
		{name: "wrong rows", b: fedtest.EncodeMatrix(3, 2, []float64{0, 1, 2, 3, 4, 5})},
		{name: "ragged", b: good[:len(good)-8]},
		{name: "NaN", b: fedtest.EncodeMatrix(2, 3, []float64{0, 1, math.NaN(), 3, 4, 5})},
		{name: "Inf", b: fedtest.EncodeMatrix(2, 3, []float64{0, 1, 2, 3, math.Inf(1), 5})},
		{name: "negative", b: fedtest.EncodeMatrix(2, 3, []float64{0, -1, 2, 3, 4, 5})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := fedtest.DecodeMatrix(tt.b, 2, 3)
			if (err == nil) != tt.ok {
				t.Errorf("DecodeMatrix = %v, %v; want ok = %v", m, err, tt.ok)
			}
		})
	}
}

func TestLedgerRefusesAndRestores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	l, err := fedtest.OpenLedger(2, path)
	if err != nil {
		t.Fatal(err)
	}
	ev := []privacy.Event{{Mechanism: "laplace", Epsilon: 0.75, Count: 1}}
	ctx := context.Background()
	for i, want := range []error{nil, nil, fed.ErrBudgetExhausted} {
		if err := l.Charge(ctx, "r", ev); !errors.Is(err, want) {
			t.Errorf("charge %d = %v; want %v", i+1, err, want)
		}
	}
	if err := l.Check(ev); !errors.Is(err, fed.ErrBudgetExhausted) {
		t.Errorf("Check after 1.5 of 2 spent = %v; want ErrBudgetExhausted", err)
	}
	again, err := fedtest.OpenLedger(2, path)
	if err != nil || again.Spent() != 1.5 || len(again.Entries()) != 2 {
		t.Errorf("reopened ledger: spent %v, %d entries, %v; want 1.5, 2, nil", again.Spent(), len(again.Entries()), err)
	}
}

func TestSumParamsValidate(t *testing.T) {
	sc := fedtest.Scenario{}
	s := sc.Setup()
	s.Params = []byte(`{"rows": -1, "epsilon": -2}`)
	if _, err := fedtest.Sum.NewAggregator(s); err == nil {
		t.Error("NewAggregator with rows -1, epsilon -2 succeeded; want an error")
	}
	s.Params = []byte(`{"rows":`)
	if _, err := fedtest.Sum.NewValidator(s); err == nil {
		t.Error("NewValidator with truncated JSON succeeded; want an error")
	}
}
