// Package attack measures what fedtopic's private releases leak, by
// attacking them: privacy attacks used as regression tests.
//
// The central tool is the hypothesis-testing form of differential privacy
// (Kairouz, Oh and Viswanath, ICML 2015): a release is (ε, δ)-DP for a
// unit exactly when no test that tells a dataset D from a neighbour D'
// (D with one unit added, removed or changed) has false-positive rate FPR
// and false-negative rate FNR with FPR + e^ε·FNR < 1 − δ, or
// FNR + e^ε·FPR < 1 − δ. Estimate plays a Game — one release on D or D'
// through a method's real release path, reduced by the attacker to one
// statistic — many times, fixes a threshold test on calibration trials,
// counts its errors on fresh trials, and turns them into a lower bound on
// ε with Clopper–Pearson confidence intervals (EpsilonLowerBound; as in
// Jagielski, Ullman and Oprea, NeurIPS 2020, and Nasr et al., IEEE S&P
// 2021). A bound above the ε a method claims is a privacy bug; with the
// noise turned off the same game must give a large bound, which shows the
// attack has power.
//
// Beside it: AUC, TPRAtFPR, MaxTPR and MaxAUC for membership inference
// against released topic-word matrices (the ROC region an (ε, δ)-DP
// release allows), and Exposure and MaxExposure for inserted canaries
// (Carlini et al., "The Secret Sharer", USENIX Security 2019).
//
// Usage:
//
//	g := attack.GameFunc(func(ctx context.Context, trial int, in bool) (float64, error) {
//		// release on D (in) or D', with noise from the trial's stream;
//		// return the attacker's statistic
//	})
//	res, err := attack.Estimate(ctx, g, attack.Config{Trials: 2000, Delta: 1e-5})
//	// res.EpsilonLB ≤ the claimed ε with confidence res.Confidence
//
// The games of the methods (FTM, PC-TD, FedLDA, FedNMF with DP-FedAvg, the
// private vocabulary round) are played by "fedtopic experiment attacks";
// docs/attacks.md explains the numbers. The package has no randomness of
// its own: a game's trials draw from streams the game derives from its
// seed and the trial number, so results are reproducible.
package attack
