package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/sim/adlda"
	"github.com/fedtopic/fedtopic/topic"
)

// buildBinary builds the fedtopic binary for process tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fedtopic")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// deployment is a three-party federation on loopback: certificates, one
// corpus file per party, a shared vocabulary and configuration files.
type deployment struct {
	dir, bin, addr string
	rounds         int
	algo           deployAlgo
	procs          []*proc // started, in order
}

// deployAlgo is what a deployment runs.
type deployAlgo struct {
	name        string
	params      string   // in the configuration files, with the round count as %d
	vocabRound  string   // the vocab_round setting; empty: the shared vocab.txt
	budget      string   // each party's budget
	simulate    []string // the simulate flags that give the same run
	listParties bool     // the parties' configurations list the federation
	spent       string   // ε a party's ledger holds at the end
}

var (
	deployADLDA = deployAlgo{name: "adlda", params: "{k: 3, rounds: %d}", budget: "{epsilon: 1}",
		simulate: []string{"--topics", "3"}, spent: "0"}
	// FTM at ε = 1 per word occurrence over documents clipped to 10
	// tokens: ε = 10 per document, the parties' whole budget, with a
	// different K_p for every party.
	deployFTM = deployAlgo{name: "ftm", params: "{topics: [2, 3, 4], rounds: %d, epsilon: 1, local_iterations: 3, max_doc_tokens: 10}", budget: "{epsilon: 10}",
		simulate:    []string{"--topics", "2,3,4", "--epsilon", "1", "--local-iterations", "3", "--max-doc-length", "10", "--budget-epsilon", "10"},
		listParties: true, spent: "10"}
	// FTM after the private vocabulary round, both counted per document:
	// ε = 8 for the vocabulary and 10·1 for FTM over documents clipped to 10
	// tokens.
	deployFTMVocabRound = deployAlgo{name: "ftm",
		params:     "{topics: [2, 3, 4], rounds: %d, epsilon: 1, local_iterations: 3, max_doc_tokens: 10}",
		vocabRound: "{epsilon: 8, delta: 1.0e-6, max_words_per_doc: 4}", budget: "{epsilon: 18, delta: 1.0e-5}",
		simulate: []string{"--topics", "2,3,4", "--epsilon", "1", "--local-iterations", "3", "--max-doc-length", "10",
			"--vocab-epsilon", "8", "--vocab-delta", "1e-6", "--vocab-l0", "4", "--budget-epsilon", "18"},
		listParties: true, spent: "18"}
)

const deploySeed = 17

func newDeployment(t *testing.T, bin string, rounds int) *deployment {
	t.Helper()
	return newDeploymentOf(t, bin, deployADLDA, rounds)
}

// newDeploymentOf is newDeployment for the given algorithm.
func newDeploymentOf(t *testing.T, bin string, algo deployAlgo, rounds int) *deployment {
	t.Helper()
	d := &deployment{dir: t.TempDir(), bin: bin, addr: freeAddr(t), rounds: rounds, algo: algo}
	params := fmt.Sprintf(algo.params, rounds)
	if _, stderr, err := runCmd(t, "certs", "--out", filepath.Join(d.dir, "certs"), "--parties", "p1,p2,p3"); err != nil {
		t.Fatalf("certs: %v\n%s", err, stderr)
	}
	lines, err := os.ReadFile("testdata/three.txt")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.SplitAfter(strings.TrimSpace(string(lines)), "\n")
	for i := range 3 {
		part := strings.Join(docs[i*len(docs)/3:(i+1)*len(docs)/3], "")
		if err := os.WriteFile(filepath.Join(d.dir, fmt.Sprintf("p%d.txt", i+1)), []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var words []string
	for _, g := range wordGroups {
		words = append(words, g...)
	}
	slices.Sort(words)
	d.write(t, "vocab.txt", strings.Join(words, "\n")+"\n")
	vocabLine := "vocab: vocab.txt"
	if algo.vocabRound != "" {
		vocabLine = "vocab_round: " + algo.vocabRound
	}
	d.write(t, "coordinator.yaml", fmt.Sprintf(`run: loopback
algorithm: %s
listen: %s
parties: [p1, p2, p3]
round_timeout: 1m
poll_timeout: 2s
linger_timeout: 5s
state_dir: state/coordinator
out: out
tls: {ca: certs/ca.pem, cert: certs/coordinator.pem, key: certs/coordinator-key.pem}
%s
params: %s
`, algo.name, d.addr, vocabLine, params))
	list := ""
	if algo.listParties {
		list = "parties: [p1, p2, p3]\n"
	}
	for i := 1; i <= 3; i++ {
		d.write(t, fmt.Sprintf("p%d.yaml", i), list+fmt.Sprintf(`run: loopback
id: p%d
algorithm: %s
coordinator: %s
server_name: coordinator
tls: {ca: certs/ca.pem, cert: certs/p%d.pem, key: certs/p%d-key.pem}
corpus: [p%d.txt]
tokenizer: {mode: whitespace}
%s
params: %s
seed: %d
budget: %s
state_dir: state/p%d
retry_max: 200ms
`, i, algo.name, d.addr, i, i, i, vocabLine, params, deploySeed, algo.budget, i))
	}
	return d
}

func (d *deployment) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// proc is a running fedtopic process whose output is collected.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	seen chan string // lines of output, for waiting on progress
	done chan error
	all  *[]*proc // every process of the deployment, for a failure's report
}

// start runs the binary with args in the deployment's directory.
func (d *deployment) start(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(d.bin, args...), seen: make(chan string, 1024), done: make(chan error, 1), all: &d.procs}
	d.procs = append(d.procs, p)
	p.cmd.Dir = d.dir
	p.cmd.Env = append(os.Environ(), env...)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &lockedWriter{p: p}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { // owned by p: it ends when the process closes its output, before Wait returns
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.seen <- sc.Text():
			default:
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

type lockedWriter struct{ p *proc }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// others returns the output of the deployment's other processes.
func (p *proc) others() string {
	var b strings.Builder
	for _, o := range *p.all {
		if o != p {
			fmt.Fprintf(&b, "\noutput of %s:\n%s", o.name, o.output())
		}
	}
	return b.String()
}

// wait waits for the process to end, at most timeout.
func (p *proc) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(timeout):
		t.Fatalf("%s did not finish within %v; output:\n%s%s", p.name, timeout, p.output(), p.others())
		return nil
	}
}

// waitFor waits until the process prints a line containing s.
func (p *proc) waitFor(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line := <-p.seen:
			if strings.Contains(line, s) {
				return
			}
		case <-deadline:
			t.Fatalf("%s did not print %q within %v; output:\n%s%s", p.name, s, timeout, p.output(), p.others())
		}
	}
}

// parties starts the three parties.
func (d *deployment) parties(t *testing.T) []*proc {
	var ps []*proc
	for i := 1; i <= 3; i++ {
		ps = append(ps, d.start(t, fmt.Sprintf("p%d", i), nil, "party", "--config", fmt.Sprintf("p%d.yaml", i)))
	}
	return ps
}

// finish waits for every process to succeed.
func finish(t *testing.T, ps ...*proc) {
	t.Helper()
	for _, p := range ps {
		if err := p.wait(t, time.Minute); err != nil {
			t.Fatalf("%s: %v; output:\n%s", p.name, err, p.output())
		}
	}
}

// reference simulates the deployment in process: the same data, vocabulary
// and seeds must give the same model.
func (d *deployment) reference(t *testing.T) *topic.Model {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sim")
	files := []string{filepath.Join(d.dir, "p1.txt"), filepath.Join(d.dir, "p2.txt"), filepath.Join(d.dir, "p3.txt")}
	args := []string{"simulate", "--algorithm", d.algo.name, "--corpus", strings.Join(files, ","), "--split", "files", "--tokenizer", "whitespace",
		"--rounds", fmt.Sprint(d.rounds), "--seed", fmt.Sprint(deploySeed), "--out", out}
	if d.algo.vocabRound == "" {
		args = append(args, "--vocab", filepath.Join(d.dir, "vocab.txt"))
	}
	args = append(args, d.algo.simulate...)
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("simulate: %v\n%s", err, stderr)
	}
	m, err := topic.Load(filepath.Join(out, "model"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// committedRounds returns the committed rounds of the deployment's run
// record, in order.
func (d *deployment) committedRounds(t *testing.T) []int {
	t.Helper()
	rounds, sum := simulateRecord(t, filepath.Join(d.dir, "out"))
	if sum.Rounds != d.rounds {
		t.Errorf("run record summary: %d rounds; want %d", sum.Rounds, d.rounds)
	}
	var out []int
	for _, r := range rounds {
		if r.Committed {
			out = append(out, r.Round)
		}
	}
	return out
}

// TestProcessCrashResume checks crash recovery with real processes: the
// coordinator is killed with SIGKILL at each of the four boundaries of round
// 3 and restarted on its state directory. The run completes with every
// round committed exactly once in the run record, and the final model is
// bit-identical to an in-process simulation with the same seeds.
//
// FTM runs the same test at one boundary: its coordinator checkpoints the
// parties' latest models, and its parties must not privatize again.
func TestProcessCrashResume(t *testing.T) {
	bin := buildBinary(t)
	for _, tt := range []struct {
		algo   deployAlgo
		points []string
	}{
		{deployADLDA, []string{"after-round-start", "mid-collection", "after-aggregate", "after-persist"}},
		{deployFTM, []string{"after-aggregate"}},
	} {
		t.Run(tt.algo.name, func(t *testing.T) { testCrashResume(t, bin, tt.algo, tt.points) })
	}
}

func testCrashResume(t *testing.T, bin string, algo deployAlgo, points []string) {
	const rounds = 6
	want := newDeploymentOf(t, bin, algo, rounds).reference(t)
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			d := newDeploymentOf(t, bin, algo, rounds)
			first := d.start(t, "coordinator", []string{"FEDTOPIC_CRASH_AT=" + point + ":3"}, "coordinator", "--config", "coordinator.yaml")
			parties := d.parties(t)
			err := first.wait(t, time.Minute)
			if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("first coordinator ended with %v; want killed by SIGKILL; output:\n%s", err, first.output())
			}
			second := d.start(t, "coordinator (restarted)", nil, "coordinator", "--config", "coordinator.yaml")
			finish(t, append(parties, second)...)
			got, err := topic.Load(filepath.Join(d.dir, "out", "model"))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Phi, want.Phi) {
				t.Errorf("model after a kill at %s differs from the uninterrupted simulation", point)
			}
			for _, p := range parties {
				if want := fmt.Sprintf("privacy spent ε = %s,", algo.spent); !strings.Contains(p.output(), want) {
					t.Errorf("%s says:\n%s\nwant %q", p.name, p.output(), want)
				}
			}
			if r := d.committedRounds(t); !slices.Equal(r, []int{1, 2, 3, 4, 5, 6}) {
				t.Errorf("committed rounds in the run record: %v; want 1 … 6 once each", r)
			}
		})
	}
}

// TestProcessPartyKill checks a party restart with real processes: a party
// is killed with SIGKILL after its third round and restarted on its state
// directory; it rejoins, and the run ends with the same model as without
// the kill. Under FTM the restarted party must also reuse its privatized
// vectors instead of releasing (and paying for) new ones.
func TestProcessPartyKill(t *testing.T) {
	bin := buildBinary(t)
	for _, tt := range []struct {
		name string
		algo deployAlgo
	}{{"adlda", deployADLDA}, {"ftm", deployFTM}, {"ftm after the vocabulary round", deployFTMVocabRound}} {
		t.Run(tt.name, func(t *testing.T) { testPartyKill(t, bin, tt.algo) })
	}
}

func testPartyKill(t *testing.T, bin string, algo deployAlgo) {
	d := newDeploymentOf(t, bin, algo, 6)
	want := d.reference(t)
	coord := d.start(t, "coordinator", nil, "coordinator", "--config", "coordinator.yaml")
	parties := d.parties(t)
	parties[1].waitFor(t, "round 3:", time.Minute)
	if err := parties[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	parties[1].wait(t, time.Minute)
	restarted := d.start(t, "p2 (restarted)", nil, "party", "--config", "p2.yaml")
	finish(t, coord, parties[0], parties[2], restarted)
	// The ledger holds one release for the whole run: FTM privatizes once,
	// and a restarted party reuses its vectors.
	if want := fmt.Sprintf("privacy spent ε = %s,", algo.spent); !strings.Contains(restarted.output(), want) {
		t.Errorf("restarted p2 says:\n%s\nwant %q", restarted.output(), want)
	}
	got, err := topic.Load(filepath.Join(d.dir, "out", "model"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Phi, want.Phi) || !slices.Equal(got.Vocab, want.Vocab) {
		t.Error("model after killing and restarting p2 differs from the uninterrupted simulation")
	}
	local, err := topic.Load(filepath.Join(d.dir, "state", "p2", "model"))
	if err != nil || local.K != 3 { // K_p of p2 under either algorithm
		t.Errorf("restarted p2's local model: %v, %v", local, err)
	}
}

// TestPartyConfigParties checks the parties list of a party configuration:
// FTM needs it, and it must list the party once.
func TestPartyConfigParties(t *testing.T) {
	base := `run: r
id: p1
coordinator: 127.0.0.1:1
tls: {ca: ca.pem, cert: p1.pem, key: p1-key.pem}
corpus: [p1.txt]
vocab: vocab.txt
state_dir: state
`
	tests := []struct{ name, extra, want string }{
		{"ftm without parties", "algorithm: ftm\n", "algorithm ftm needs parties"},
		{"own id missing", "algorithm: adlda\nparties: [p2, p3]\n", `does not list the party's own id "p1"`},
		{"listed twice", "algorithm: ftm\nparties: [p1, p2, p2]\n", `parties lists "p2" twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p1.yaml")
			if err := os.WriteFile(path, []byte(base+tt.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := runCmd(t, "party", "--config", path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("party with %q: %v; want an error naming %s and saying %q", tt.extra, err, path, tt.want)
			}
		})
	}
}

// TestCoordinatorConfigSecureAggregation: secure_aggregation's threshold
// must be a majority of the parties, and min_parties, if given, must equal
// it; the transport's limits then fit the protocol's messages.
func TestCoordinatorConfigSecureAggregation(t *testing.T) {
	base := coordinatorConfig{Run: "r", Algorithm: "adlda", Listen: "127.0.0.1:0", StateDir: "s", Out: "o",
		TLS: tlsFiles{CA: "ca", Cert: "c", Key: "k"}, Vocab: "v.txt", Parties: []string{"p1", "p2", "p3", "p4"}}
	for _, tc := range []struct {
		threshold, minParties int
		want                  string // "" for valid
	}{
		{3, 0, ""},
		{4, 4, ""},
		{2, 0, "secure_aggregation.threshold = 2 with 4 parties"},
		{5, 0, "secure_aggregation.threshold = 5 with 4 parties"},
		{3, 2, "min_parties = 2, but with secure_aggregation the quorum is its threshold 3"},
	} {
		cfg := base
		cfg.MinParties = tc.minParties
		cfg.SecureAggregation = &fed.SecureAggregation{Threshold: tc.threshold}
		err := cfg.validate("c.yaml")
		if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || (tc.want != "" && !strings.Contains(got, tc.want)) {
			t.Errorf("threshold %d, min_parties %d: %v; want %q", tc.threshold, tc.minParties, err, tc.want)
		}
	}
	val := adlda.Validator{K: 2, V: 3}
	agg, err := adlda.Algorithm.NewAggregator(fed.Setup{Run: "r", Parties: base.Parties, Vocab: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	lim := transportLimits(val, &fed.SecureAggregation{Threshold: 3}, agg, 4)
	if got, want := lim.MaxUpdateSize(), fed.SecAggMaxMessage(4, 6); got != want || got <= val.MaxUpdateSize() {
		t.Errorf("limit under secure aggregation %d; want %d (above the plain %d)", got, want, val.MaxUpdateSize())
	}
	if got := transportLimits(val, nil, agg, 4).MaxUpdateSize(); got != val.MaxUpdateSize() {
		t.Errorf("limit without secure aggregation %d; want the validator's %d", got, val.MaxUpdateSize())
	}
}

// countingService counts the calls that reach it.
type countingService struct{ calls int }

func (s *countingService) Join(context.Context, *fed.JoinRequest) (*fed.JoinReply, error) {
	s.calls++
	return &fed.JoinReply{}, nil
}

func (s *countingService) Next(context.Context, *fed.TaskRequest) (*fed.Task, error) {
	s.calls++
	return &fed.Task{}, nil
}

func (s *countingService) Submit(context.Context, *fed.Submission) (*fed.Receipt, error) {
	s.calls++
	return &fed.Receipt{}, nil
}

func (s *countingService) Traffic(string, int, int, int) {}

// TestEndingPhase checks that while the vocabulary round is served, a party
// asking for the training run is told to retry (an error the party retries
// on) and the round's own calls go through: a party that collected the
// vocabulary first once ended its run on an unknown run.
func TestEndingPhase(t *testing.T) {
	inner := &countingService{}
	s := endingPhase{Service: inner, next: "demo"}
	ctx := context.Background()
	_, errJoin := s.Join(ctx, &fed.JoinRequest{Run: "demo", Party: "p1"})
	_, errNext := s.Next(ctx, &fed.TaskRequest{Run: "demo", Party: "p1"})
	_, errSubmit := s.Submit(ctx, &fed.Submission{Run: "demo", Party: "p1"})
	for _, err := range []error{errJoin, errNext, errSubmit} {
		if !errors.Is(err, fed.ErrUnavailable) {
			t.Errorf("call for the training run: %v; want %v", err, fed.ErrUnavailable)
		}
	}
	if inner.calls != 0 {
		t.Errorf("%d calls for the training run reached the vocabulary round", inner.calls)
	}
	if _, err := s.Join(ctx, &fed.JoinRequest{Run: "demo-vocabulary", Party: "p1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx, &fed.TaskRequest{Run: "demo-vocabulary", Party: "p1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(ctx, &fed.Submission{Run: "demo-vocabulary", Party: "p1"}); err != nil {
		t.Fatal(err)
	}
	if inner.calls != 3 {
		t.Errorf("%d of the vocabulary round's 3 calls reached it", inner.calls)
	}
}
