package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/topic"
)

// deployGuide is the user's guide whose examples the deployment tests run.
const deployGuide = "../../docs/deploy.md"

// guideFiles returns the configuration files of the guide: every fenced
// yaml block whose first line is "# file: NAME", by NAME.
func guideFiles(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(deployGuide)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?ms)^```yaml\n# file: (\\S+)\n(.*?)^```")
	files := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		if _, dup := files[m[1]]; dup {
			t.Fatalf("%s: two blocks for %s", deployGuide, m[1])
		}
		files[m[1]] = m[2]
	}
	return files
}

// guideExample is one algorithm's example in the guide: its coordinator's
// and first party's files; the other parties' files are made from the
// first as the guide says (p1 replaced everywhere but in the parties list).
type guideExample struct {
	name, coordinator, party string
}

var guideExamples = []guideExample{
	{"adlda", "coordinator.yaml", "p1.yaml"},
	{"ftm", "ftm-coordinator.yaml", "ftm-p1.yaml"},
	{"iftm", "iftm-coordinator.yaml", "iftm-p1.yaml"},
	{"pctd", "pctd-coordinator.yaml", "pctd-p1.yaml"},
	{"fedlda", "fedlda-coordinator.yaml", "fedlda-p1.yaml"},
	{"fednmf", "fednmf-coordinator.yaml", "fednmf-p1.yaml"},
}

// partyFile derives party id's file from p1's as the guide tells a reader
// to: p1 replaced by id on every line but the parties list.
func partyFile(p1, id string) string {
	lines := strings.SplitAfter(p1, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "parties:") {
			lines[i] = strings.ReplaceAll(l, "p1", id)
		}
	}
	return strings.Join(lines, "")
}

// edit applies the test's changes to a configuration file of the guide,
// and only those: the address of a free port, fewer rounds, and for a
// party a fixed seed instead of noise keyed from the operating system (so
// that two runs can be compared bit for bit) and short retry pauses.
func edit(t *testing.T, src string, set map[string]any, params map[string]any, drop ...string) string {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		doc[k] = v
	}
	p, ok := doc["params"].(map[string]any)
	if !ok {
		t.Fatalf("configuration without params:\n%s", src)
	}
	for k, v := range params {
		p[k] = v
	}
	for _, k := range drop {
		delete(p, k)
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// guideDeployment writes one example of the guide into a fresh directory:
// certificates made by fedtopic certs, one corpus per party (consecutive
// slices of the demo corpus) and the configuration files, edited only as
// edit says.
func guideDeployment(t *testing.T, bin string, ex guideExample, rounds int) *deployment {
	t.Helper()
	files := guideFiles(t)
	d := &deployment{dir: t.TempDir(), bin: bin, addr: freeAddr(t), rounds: rounds}
	if out, err := exec.Command(bin, "certs", "--out", filepath.Join(d.dir, "certs"), "--parties", "p1,p2,p3").CombinedOutput(); err != nil {
		t.Fatalf("certs: %v\n%s", err, out)
	}
	writeGlossSlices(t, filepath.Join(d.dir, "data"), 3, 1500)
	coord, p1 := files[ex.coordinator], files[ex.party]
	if coord == "" || p1 == "" {
		t.Fatalf("%s has no blocks # file: %s and %s", deployGuide, ex.coordinator, ex.party)
	}
	d.write(t, "coordinator.yaml", edit(t, coord,
		map[string]any{"listen": d.addr, "poll_timeout": "2s", "linger_timeout": "10s"},
		map[string]any{"rounds": rounds}, "secure_noise"))
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("p%d", i)
		d.write(t, id+".yaml", edit(t, partyFile(p1, id),
			map[string]any{"coordinator": d.addr, "seed": deploySeed + i, "retry_max": "200ms"},
			map[string]any{"rounds": rounds}, "secure_noise"))
	}
	return d
}

// writeGlossSlices writes n consecutive slices of size documents of the
// demo corpus as text files dir/p1.txt … one document per line.
func writeGlossSlices(t *testing.T, dir string, n, size int) {
	t.Helper()
	f, err := os.Open("../../demo/wordnet-glosses.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 1; i <= n; i++ {
		var b strings.Builder
		for range size {
			if !sc.Scan() {
				t.Fatalf("demo corpus: fewer than %d documents", n*size)
			}
			var doc struct{ Text string }
			if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			b.WriteString(strings.ReplaceAll(doc.Text, "\n", " ") + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.txt", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runResult is what a deployed run left.
type runResult struct {
	model   *topic.Model
	summary fed.SummaryLine
	rounds  []fed.RoundLine
}

func (d *deployment) result(t *testing.T) runResult {
	t.Helper()
	m, err := topic.Load(filepath.Join(d.dir, "out"+d.outSuffix(t), "model"))
	if err != nil {
		t.Fatal(err)
	}
	rounds, sum := simulateRecord(t, filepath.Join(d.dir, "out"+d.outSuffix(t)))
	return runResult{model: m, summary: sum, rounds: rounds}
}

// outSuffix reads the coordinator's out directory from its configuration.
func (d *deployment) outSuffix(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, "coordinator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Out string }
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(c.Out, "out")
}

// exitedOK checks that a party ended with status 0 and said why.
func exitedOK(t *testing.T, p *proc, rounds int) {
	t.Helper()
	if err := p.wait(t, time.Minute); err != nil {
		t.Errorf("%s: %v; output:\n%s", p.name, err, p.output())
		return
	}
	if want := fmt.Sprintf("done after %d rounds", rounds); !strings.Contains(p.output(), want) || !strings.Contains(p.output(), "the coordinator ended the run, exiting") {
		t.Errorf("%s says:\n%s\nwant %q and that the coordinator ended the run", p.name, p.output(), want)
	}
}

// TestDeployGuide runs every example of docs/deploy.md as real processes
// on loopback, twice: once without interruption, and once with a party
// killed (SIGKILL) after its first round and restarted, and the
// coordinator killed (SIGKILL) in the middle of round 3 and restarted. The
// interrupted run must end with the same model file — provenance and its
// privacy record included — as the uninterrupted one, except for its
// creation time, and with a run record whose summary counts the whole run.
func TestDeployGuide(t *testing.T) {
	bin := buildBinary(t)
	const rounds = 4
	for _, ex := range guideExamples {
		t.Run(ex.name, func(t *testing.T) {
			start := time.Now()
			// Uninterrupted.
			a := guideDeployment(t, bin, ex, rounds)
			coord := a.start(t, "coordinator", nil, "coordinator", "--config", "coordinator.yaml")
			parties := a.parties(t)
			if err := coord.wait(t, time.Minute); err != nil {
				t.Fatalf("coordinator: %v; output:\n%s", err, coord.output())
			}
			for _, p := range parties {
				exitedOK(t, p, rounds)
			}
			want := a.result(t)

			// Interrupted: p2 killed after round 1, the coordinator in round 3.
			b := guideDeployment(t, bin, ex, rounds)
			first := b.start(t, "coordinator", []string{"FEDTOPIC_CRASH_AT=mid-collection:3"}, "coordinator", "--config", "coordinator.yaml")
			parties = b.parties(t)
			parties[1].waitFor(t, "round 1:", time.Minute)
			if err := parties[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			parties[1].wait(t, time.Minute)
			parties[1] = b.start(t, "p2 (restarted)", nil, "party", "--config", "p2.yaml")
			err := first.wait(t, time.Minute)
			if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("first coordinator ended with %v; want killed by SIGKILL; output:\n%s", err, first.output())
			}
			second := b.start(t, "coordinator (restarted)", nil, "coordinator", "--config", "coordinator.yaml")
			if err := second.wait(t, time.Minute); err != nil {
				t.Fatalf("restarted coordinator: %v; output:\n%s", err, second.output())
			}
			for _, p := range parties {
				exitedOK(t, p, rounds)
			}
			got := b.result(t)
			if want := "going on from round 3"; !strings.Contains(second.output(), want) {
				t.Errorf("restarted coordinator says:\n%s\nwant %q", second.output(), want)
			}
			if want := fmt.Sprintf(", %d rounds in", rounds); !strings.Contains(second.output(), want) {
				t.Errorf("restarted coordinator's summary:\n%s\nwant %q", second.output(), want)
			}

			// The same model file but for its creation time.
			if got.model.Prov.Created == "" || want.model.Prov.Created == "" {
				t.Error("a model without its creation time")
			}
			got.model.Prov.Created, want.model.Prov.Created = "", ""
			if !reflect.DeepEqual(got.model, want.model) {
				t.Errorf("model of the interrupted run differs from the uninterrupted one: K %d, %d; V %d, %d; Φ equal %v; α equal %v; β %v, %v; vocabulary equal %v\n got provenance %+v\nwant provenance %+v",
					got.model.K, want.model.K, got.model.V, want.model.V, slices.Equal(got.model.Phi, want.model.Phi), slices.Equal(got.model.Alpha, want.model.Alpha),
					got.model.Beta, want.model.Beta, slices.Equal(got.model.Vocab, want.model.Vocab), got.model.Prov, want.model.Prov)
			}
			if len(want.model.Prov.Privacy) != 3 {
				t.Errorf("provenance privacy %+v; want every party's spend", want.model.Prov.Privacy)
			}
			for _, ps := range got.model.Prov.Privacy {
				if ps.Epsilon <= 0 || ps.Unit != "document" {
					t.Errorf("provenance privacy of %s: ε = %v per %q; want a positive ε per document", ps.Party, ps.Epsilon, ps.Unit)
				}
			}
			// A run record that counts the whole run.
			if got.summary.Rounds != rounds || !reflect.DeepEqual(got.summary.Epsilon, want.summary.Epsilon) {
				t.Errorf("summary of the interrupted run: %d rounds, ε %+v; want %d rounds, ε %+v", got.summary.Rounds, got.summary.Epsilon, rounds, want.summary.Epsilon)
			}
			var committed []int
			for _, r := range got.rounds {
				if r.Committed {
					committed = append(committed, r.Round)
				}
			}
			if !slices.Equal(committed, []int{1, 2, 3, 4}) {
				t.Errorf("committed rounds in the run record: %v; want 1 … 4 once each", committed)
			}
			for i, bt := range got.summary.Bytes {
				if w := want.summary.Bytes[i]; bt.Up < w.Up {
					t.Errorf("%s sent %d bytes in the interrupted run's summary, fewer than the %d of the uninterrupted run", bt.Party, bt.Up, w.Up)
				}
			}
			t.Logf("%s: two runs of %d rounds as processes in %.1fs", ex.name, rounds, time.Since(start).Seconds())
		})
	}
}
