package fed

// The run record (run.jsonl): what a federation run writes, a JSON line per
// round attempt and a summary line at the end. The simulator and the
// coordinator write it (package sim), reports read it (eval/report).

// RecordFile is the name of the run record in a run directory.
const RecordFile = "run.jsonl"

// Line types of a run record.
const (
	TypeRound   = "round"
	TypeSummary = "summary"
)

// RoundLine is one line of a run record: one attempt at a round.
type RoundLine struct {
	Type      string             `json:"type"` // TypeRound
	Round     int                `json:"round"`
	Attempt   int                `json:"attempt"`
	Committed bool               `json:"committed"`
	Replied   []string           `json:"replied"`
	Dropped   []string           `json:"dropped,omitempty"`
	Rejoined  []string           `json:"rejoined,omitempty"`
	Refused   []string           `json:"refused,omitempty"`
	Rejected  []Rejection        `json:"rejected,omitempty"`
	Bytes     []Traffic          `json:"bytes"`           // per party, this attempt
	Spent     []PartySpend       `json:"spent,omitempty"` // privacy events each party declared for this attempt
	Epsilon   []PartyEpsilon     `json:"epsilon"`         // per party, composed over the run so far
	DurationS float64            `json:"duration_s"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	// PartyMetrics holds each party's local model's metrics, when measured.
	PartyMetrics []PartyMetrics `json:"party_metrics,omitempty"`
	Error        string         `json:"error,omitempty"`
	// SecureAggregation describes the round's secure aggregation, if any.
	SecureAggregation *SecureRecord `json:"secure_aggregation,omitempty"`
}

// PartyMetrics are one party's local model's metrics.
type PartyMetrics struct {
	Party   string             `json:"party"`
	Metrics map[string]float64 `json:"metrics"`
}

// PartyEpsilon is the privacy a party has spent over the run, composed by
// the accountant from the events it declared. The party's own ledger is
// authoritative; this is the coordinator's view.
type PartyEpsilon struct {
	Party      string  `json:"party"`
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Unit       string  `json:"unit,omitempty"`
	Accountant string  `json:"accountant,omitempty"`
	Releases   int     `json:"releases"`
	// DocumentEpsilon is the cost at document level (group privacy), when
	// the writer knows the documents' length bound.
	DocumentEpsilon float64 `json:"document_epsilon,omitempty"`
	Error           string  `json:"error,omitempty"` // why the events could not be composed
}

// SummaryLine is the last line of a run record.
type SummaryLine struct {
	Type      string             `json:"type"` // TypeSummary
	Run       string             `json:"run"`
	Algorithm string             `json:"algorithm"`
	Parties   []string           `json:"parties"`
	Seed      uint64             `json:"seed"`
	Rounds    int                `json:"rounds"` // committed
	Bytes     []Traffic          `json:"bytes"`  // per party, whole run
	Epsilon   []PartyEpsilon     `json:"epsilon"`
	DurationS float64            `json:"duration_s"`
	Metrics   map[string]float64 `json:"metrics,omitempty"` // final global model
	Error     string             `json:"error,omitempty"`   // why the run stopped early

	// What the writer knows besides the engine; all optional.
	Model        string            `json:"model,omitempty"` // model family: "lda", "slda", ...
	Topics       int               `json:"topics,omitempty"`
	Vocab        int               `json:"vocab,omitempty"`
	Corpus       string            `json:"corpus,omitempty"`
	Split        string            `json:"split,omitempty"`
	Params       map[string]string `json:"params,omitempty"`
	PartyData    []PartyData       `json:"party_data,omitempty"`
	Privacy      *Statement        `json:"privacy,omitempty"`
	PartyMetrics []PartyMetrics    `json:"party_metrics,omitempty"` // final local models
	TopicMerges  []TopicMerge      `json:"topic_merges,omitempty"`  // which party topics each global topic merged (Merger)
	Baselines    []Baseline        `json:"baselines,omitempty"`     // reference models' quality
	Models       *ModelFiles       `json:"models,omitempty"`
	// SecureAggregation, when the run used it, states its threshold and
	// how distributed noise was charged.
	SecureAggregation *SecureSummary `json:"secure_aggregation,omitempty"`
}

// SecureSummary describes secure aggregation in a run's summary.
type SecureSummary struct {
	Threshold int     `json:"threshold"`
	Sigma     float64 `json:"sigma,omitempty"` // total σ of distributed noise on the grid; 0: none
	// Noise states how distributed noise was charged (NoiseStatement),
	// when there was any.
	Noise string `json:"noise,omitempty"`
}

// PartyData describes one party's data and budget.
type PartyData struct {
	Party         string  `json:"party"`
	Docs          int     `json:"docs,omitempty"`
	Tokens        int     `json:"tokens,omitempty"`
	Topics        int     `json:"topics,omitempty"` // the party's number of topics, where parties differ (FTM)
	BudgetEpsilon float64 `json:"budget_epsilon,omitempty"`
	BudgetDelta   float64 `json:"budget_delta,omitempty"`
}

// Statement is a run's privacy statement (docs/privacy.md) where the
// writer knows more than the events say.
type Statement struct {
	Unit         string   `json:"unit,omitempty"`
	Neighbouring string   `json:"neighbouring,omitempty"`
	Accountant   string   `json:"accountant,omitempty"`
	Released     []string `json:"released,omitempty"` // what left the parties
	Notes        []string `json:"notes,omitempty"`
	// Costs is what each kind of release costs every party, as planned
	// from the configuration before the run.
	Costs []ReleaseCost `json:"costs,omitempty"`
}

// ReleaseCost is what one kind of release costs each party: at the
// ledger's unit (Epsilon, Delta, Unit: one document) and, where the method
// counts a smaller unit, at that unit too (MethodEpsilon per MethodUnit,
// GroupSize of them in a document at most, by group privacy).
type ReleaseCost struct {
	Release       string  `json:"release"`
	Epsilon       float64 `json:"epsilon"`
	Delta         float64 `json:"delta,omitempty"`
	Unit          string  `json:"unit"`
	MethodEpsilon float64 `json:"method_epsilon,omitempty"`
	MethodUnit    string  `json:"method_unit,omitempty"`
	GroupSize     int     `json:"group_size,omitempty"`
}

// ModelFiles names a run's model files, relative to its directory.
type ModelFiles struct {
	Global  string       `json:"global,omitempty"`
	Parties []PartyModel `json:"parties,omitempty"`
}

// PartyModel names one party's final local model file.
type PartyModel struct {
	Party string `json:"party"`
	Path  string `json:"path"`
}

// Baseline is a reference model's quality in a run record: a party's own
// model trained on its data alone, or a model trained on the pooled data.
type Baseline struct {
	Name    string             `json:"name,omitempty"`
	Kind    string             `json:"kind,omitempty"` // "single-party" or "pooled"
	Party   string             `json:"party,omitempty"`
	Metrics map[string]float64 `json:"metrics"`
}
