package secagg

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestMasksCancel checks that masks cancel: with n = 5 and t = 3, whether 0, 1 or 2 parties
// drop after the masking stage was sent to them (their masked vectors never
// arrive, so the coordinator rebuilds their mask keys), or after their
// masked vector arrived (their self-mask seeds are rebuilt without them),
// the unmasked sum equals the plaintext sum of the included parties.
func TestMasksCancel(t *testing.T) {
	tests := []struct {
		name   string
		drop   map[Kind][]int
		bits   int
		wantIn []int
	}{
		{name: "no dropout", wantIn: []int{0, 1, 2, 3, 4}},
		{name: "one drops before masking", drop: map[Kind][]int{KindForward: {2}}, wantIn: []int{0, 1, 3, 4}},
		{name: "two drop before masking", drop: map[Kind][]int{KindForward: {0, 4}}, wantIn: []int{1, 2, 3}},
		{name: "one drops after masking", drop: map[Kind][]int{KindUnmask: {1}}, wantIn: []int{0, 1, 2, 3, 4}},
		{name: "two drop after masking", drop: map[Kind][]int{KindUnmask: {1, 3}}, wantIn: []int{0, 1, 2, 3, 4}},
		{name: "one before and one after masking", drop: map[Kind][]int{KindForward: {3}, KindUnmask: {0}}, wantIn: []int{0, 1, 2, 4}},
		{name: "one drops before sharing", drop: map[Kind][]int{KindKeys: {4}}, wantIn: []int{0, 1, 2, 3}},
		{name: "two drop before masking, ring 2^64", drop: map[Kind][]int{KindForward: {1, 2}}, bits: 64, wantIn: []int{0, 3, 4}},
		// The smallest ring the parameters allow (n·B = 1,280,000 < 2^21),
		// values packed 22 bits each.
		{name: "no dropout, ring 2^22", bits: 22, wantIn: []int{0, 1, 2, 3, 4}},
		{name: "one before and one after masking, ring 2^22", drop: map[Kind][]int{KindForward: {3}, KindUnmask: {0}}, bits: 22, wantIn: []int{0, 1, 2, 4}},
		{name: "two drop before masking, ring 2^22", drop: map[Kind][]int{KindForward: {0, 4}}, bits: 22, wantIn: []int{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testParams(5, 3, 257)
			if tt.bits != 0 {
				p.Bits = tt.bits
			}
			inputs := randomInputs(p, 11)
			out, err := newInstance(t, p, inputs, 5).run(tt.drop)
			if err != nil {
				t.Fatalf("run = %v, want the sum", err)
			}
			if !slices.Equal(out.Included, tt.wantIn) {
				t.Errorf("included = %v, want %v", out.Included, tt.wantIn)
			}
			if want := plainSum(inputs, tt.wantIn); !slices.Equal(out.Sum, want) {
				t.Errorf("sum[:4] = %v, want %v", out.Sum[:4], want[:4])
			}
		})
	}
}

// TestBelowThreshold checks the threshold: when fewer than t parties are left at any
// stage, the coordinator aborts with ErrBelowThreshold, releases no sum,
// and refuses to go on.
func TestBelowThreshold(t *testing.T) {
	tests := []struct {
		name string
		drop map[Kind][]int
	}{
		{name: "three of five never advertise", drop: map[Kind][]int{KindSetup: {0, 1, 2}}},
		{name: "three of five drop before sharing", drop: map[Kind][]int{KindKeys: {1, 2, 3}}},
		{name: "three of five drop before masking", drop: map[Kind][]int{KindForward: {0, 2, 4}}},
		{name: "three of five drop after masking", drop: map[Kind][]int{KindUnmask: {2, 3, 4}}},
		{name: "one before and two after masking", drop: map[Kind][]int{KindForward: {1}, KindUnmask: {2, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testParams(5, 3, 16)
			in := newInstance(t, p, randomInputs(p, 3), 9)
			out, err := in.run(tt.drop)
			if !errors.Is(err, ErrBelowThreshold) {
				t.Fatalf("run = %v, want ErrBelowThreshold", err)
			}
			if out.Done || out.Sum != nil {
				t.Errorf("aborted run released done=%v sum=%v", out.Done, out.Sum)
			}
			if _, _, err := in.server.Result(); err == nil {
				t.Errorf("Result after abort = nil error, want one")
			}
			if _, err := in.server.Collect(make([][]byte, p.Parties)); !errors.Is(err, ErrAborted) {
				t.Errorf("Collect after abort = %v, want ErrAborted", err)
			}
			st, err := in.server.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if len(st) > 256 {
				t.Errorf("aborted coordinator state is %d bytes; want it to keep nothing but the parameters", len(st))
			}
		})
	}
}

// TestUnmaskRefused checks the refusals that protect a party: a party refuses an unmask request that lists a
// party as both alive and dropped (it would hand over both secrets of that
// party, and the coordinator could unmask its input alone), that lists
// fewer than t alive, or that does not partition the parties it holds
// shares of; and it never answers a second, different request.
func TestUnmaskRefused(t *testing.T) {
	p := testParams(5, 3, 8)
	in := newInstance(t, p, randomInputs(p, 1), 2)
	// Play up to the unmask stage, with party 4 dropping before masking.
	out, err := in.server.Start()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		k, _ := MessageKind(out.For(out.To[0]))
		replies := make([][]byte, p.Parties)
		for _, i := range out.To {
			if k == KindForward && i == 4 {
				continue
			}
			if replies[i], err = in.parties[i].Handle(out.For(i), in.inputs[i]); err != nil {
				t.Fatalf("party %d: Handle(%s) = %v", i, k, err)
			}
		}
		if out, err = in.server.Collect(replies); err != nil {
			t.Fatal(err)
		}
	}
	unmask := func(alive, dropped []int) []byte {
		return (&message{kind: KindUnmask, session: p.Session, alive: alive, dropped: dropped}).encode()
	}
	if want := unmask([]int{0, 1, 2, 3}, []int{4}); string(out.Payload) != string(want) {
		t.Fatalf("coordinator's unmask request differs from alive 0–3, dropped 4")
	}
	tests := []struct {
		name           string
		alive, dropped []int
		why            string // the reason the error must give
	}{
		{name: "alive and dropped", alive: []int{0, 1, 2, 3}, dropped: []int{3, 4}, why: "both alive and dropped"},
		{name: "all alive and dropped", alive: []int{0, 1, 2, 3, 4}, dropped: []int{0, 1, 2, 3, 4}, why: "both alive and dropped"},
		{name: "fewer than t alive", alive: []int{0, 1}, dropped: []int{2, 3, 4}, why: "fewer than the threshold"},
		{name: "itself dropped", alive: []int{1, 2, 3}, dropped: []int{0, 4}, why: "not listed alive"},
		{name: "a party left out", alive: []int{0, 1, 2}, dropped: []int{4}, why: "are not the"},
		{name: "an unknown party", alive: []int{0, 1, 2, 3}, dropped: []int{}, why: "are not the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := in.parties[0].MarshalBinary()
			got, err := in.parties[0].Handle(unmask(tt.alive, tt.dropped), nil)
			if !errors.Is(err, ErrRefused) || got != nil || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("Handle(unmask alive=%v dropped=%v) = %d bytes, %v; want ErrRefused saying %q", tt.alive, tt.dropped, len(got), err, tt.why)
			}
			after, _ := in.parties[0].MarshalBinary()
			if string(before) != string(after) {
				t.Errorf("refused request changed the party's state")
			}
		})
	}
	// The honest request is answered, and then a different one is refused.
	if _, err := in.parties[0].Handle(out.Payload, nil); err != nil {
		t.Fatalf("Handle(honest unmask) = %v", err)
	}
	if _, err := in.parties[0].Handle(unmask([]int{0, 1, 2}, []int{3, 4}), nil); !errors.Is(err, ErrStage) {
		t.Errorf("second, different unmask request = %v, want ErrStage", err)
	}
}
