package privacy

// Event records one privacy-relevant release made by a mechanism: enough for
// an accountant to compute its cost without seeing the data. Mechanisms
// return an Event with every release; only the accountant turns Events into
// (ε, δ).
type Event struct {
	Mechanism   string  `json:"mechanism"`             // e.g. "discrete-laplace", "gaussian", "krr", "rrp", "partition-selection"
	Epsilon     float64 `json:"epsilon,omitempty"`     // ε of one release for ε-DP / ε-LDP mechanisms
	Delta       float64 `json:"delta,omitempty"`       // δ of one release, where the mechanism has one
	Sigma       float64 `json:"sigma,omitempty"`       // noise standard deviation (Gaussian mechanisms)
	Sensitivity float64 `json:"sensitivity,omitempty"` // L1 (Laplace) or L2 (Gaussian) sensitivity per unit
	Unit        string  `json:"unit"`                  // privacy unit: "word occurrence", "document", "user", ...
	Count       int     `json:"count"`                 // number of identical releases this event stands for (≥ 1)
}
