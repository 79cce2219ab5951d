package fed

// SecAggParams exposes secAggParams to the external tests and benchmarks:
// the protocol parameters the engine derives for a round.
var SecAggParams = secAggParams
