package topic

// Model is a trained topic model: the topic-word distributions Φ, the
// vocabulary they are indexed by, the hyperparameters and where the model
// came from.
type Model struct {
	// Phi holds p(w|k) row-major: Phi[k*V+w], K rows of V columns; each row
	// sums to 1.
	Phi   []float64
	K, V  int
	Vocab []string // len V; Vocab[w] is the word with id w
	// Alpha is the document-topic Dirichlet prior, one entry per topic
	// (symmetric priors repeat the same value).
	Alpha []float64
	Beta  float64 // symmetric topic-word Dirichlet prior
	Prov  Provenance
}

// Provenance records how a model was made, so a seed plus the recorded
// parameters reproduce it.
type Provenance struct {
	Method     string            // "lda", "slda", "ftm", ...
	Params     map[string]string // method parameters as given on the command line
	Seed       uint64
	Iterations int
	Rounds     int
	Corpus     string // corpus description (file names, document and token counts)
	Created    string // RFC 3339 time of creation
	Version    string // fedtopic version that wrote the model
	Privacy    []PrivacySpend
}

// PrivacySpend is the privacy cost one party paid for a model, as reported
// by the accountant.
type PrivacySpend struct {
	Party   string
	Epsilon float64
	Delta   float64
	Unit    string // privacy unit: "word occurrence", "document", ...
}

// Row returns p(·|k), a view into Phi.
func (m *Model) Row(k int) []float64 { return m.Phi[k*m.V : (k+1)*m.V] }
