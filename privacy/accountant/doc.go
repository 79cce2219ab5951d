// Package accountant turns privacy Events into (ε, δ) and keeps each
// party's budget ledger.
//
// Accounting (Compose, RDP, the Gaussian functions):
//
//   - pure ε-DP releases add up (Dwork and Roth 2014, Theorem 3.14), and
//     so do (ε, δ) releases (basic composition);
//   - Gaussian releases compose exactly as μ-GDP, μ = √T·Δ/σ, converted to
//     (ε, δ) with the analytic Gaussian formula (Balle and Wang, "Improving
//     the Gaussian Mechanism for Differential Privacy", ICML 2018; Dong,
//     Roth and Su, "Gaussian Differential Privacy", JRSS-B 2022) — the exact
//     answer, which fedtopic reports;
//   - the general RDP accountant (Mironov, "Rényi Differential Privacy",
//     CSF 2017) covers the discrete Gaussian, the subsampled Gaussian of
//     DP-FedAvg (Mironov, Talwar and Zhang 2019), Laplace and randomized
//     response, converted with the improved bound of Balle et al. (AISTATS
//     2020);
//   - per-user LDP composition (FedLDA: per tuple × tuples × iterations) is
//     basic composition of the tuple events;
//   - Group converts an event to a coarser unit by group privacy (word
//     occurrence → document).
//
// Budgets (Ledger): a durable, append-only, checksummed record of every
// release a party makes; Check before drawing noise, Charge/Spend (fsynced)
// before the release leaves, refusal with ErrBudgetExhausted when a release
// would exceed the budget, exact restore after a crash.
//
// Usage:
//
//	sigma, _ := accountant.GaussianSigma(1, 1e-5, 1)    // 3.7306
//	cost, _ := accountant.Compose(events, 1e-5)           // (ε, δ) of a run
//	led, _ := accountant.OpenLedger("party.ledger", accountant.Budget{Epsilon: 8, Delta: 1e-5})
//	if err := led.Check(plan); err != nil { ... }         // before any noise
//	if err := led.Charge(ctx, "run/round-3", events); err != nil { ... } // before sending
//
// Guarantees: results are deterministic functions of the events (orders
// are a fixed grid, events are merged in first-seen order). Every bound is
// an upper bound: bisection returns the safe side, a calibrated σ is never
// too small, and a ledger's total never under-counts what was released.
// RRP's Events carry the Zipf assumption of its Theorem 1 and every Cost
// that includes them lists it.
//
// See example_test.go for runnable examples.
package accountant
