package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fednmf"
)

// fednmfFlags are FedNMF's own simulate flags. A client of the paper is a
// party here: the number of clients is --parties and their data --split
// (dirichlet=α for the paper's non-IID clients), so FedNMF adds no
// --clients flag of its own.
type fednmfFlags struct {
	fraction  float64
	serverOpt string
	serverLR  float64
	lambda    float64
	epochs    int
	batch     int
	lr        float64
	features  string
	clip      float64
	z         float64
}

func (f *fednmfFlags) register(fs *pflag.FlagSet) []string {
	fs.Float64Var(&f.fraction, "client-fraction", fednmf.DefaultClientFraction, "fednmf: C, the fraction of the parties (clients) sampled each round; with --clip each joins with probability C")
	fs.StringVar(&f.serverOpt, "server-opt", fednmf.OptFedAvg, "fednmf: server aggregation: "+strings.Join(fednmf.ServerOpts, ", "))
	fs.Float64Var(&f.serverLR, "server-lr", 0, "fednmf: server learning rate η (default 1 for fedavg, 0.1 for fedadagrad and fedadam, 0.01 for fedyogi)")
	fs.Float64Var(&f.lambda, "mi-lambda", 0, "fednmf: λ, weight of the mutual-information (SMILE) term; 0 is plain FedNMF")
	fs.IntVar(&f.epochs, "local-epochs", fednmf.DefaultLocalEpochs, "fednmf: E, local passes over a sampled party's documents per round")
	fs.IntVar(&f.batch, "batch", fednmf.DefaultBatch, "fednmf: B, mini-batch size of the local SGD")
	fs.Float64Var(&f.lr, "lr", fednmf.DefaultLR, "fednmf: η, learning rate of the local SGD")
	fs.StringVar(&f.features, "features", fednmf.FeaturesTFIDF, "fednmf: document features: tfidf (each party's own idf, unit-norm documents) or counts")
	fs.Float64Var(&f.clip, "clip", 0, "fednmf: DP-FedAvg (an addition to the paper): clip each party's update to this L2 norm S; needs --noise-multiplier")
	fs.Float64Var(&f.z, "noise-multiplier", 0, "fednmf: DP-FedAvg: z, the coordinator adds N(0, (z·S)²) to the sum of the clipped updates")
	return []string{"client-fraction", "server-opt", "server-lr", "mi-lambda", "local-epochs", "batch", "lr", "features", "clip", "noise-multiplier"}
}

// config returns FedNMF's parameters from the flags and the common
// settings.
func (f *fednmfFlags) config(s simSettings) (fednmf.Config, error) {
	var cfg fednmf.Config
	if len(s.ks) != 1 {
		return cfg, usagef("--topics %s: fednmf trains one global W; give one number of topics", joinList(s.ks))
	}
	if s.extra != "" {
		if err := json.Unmarshal([]byte(s.extra), &cfg); err != nil {
			return cfg, usagef("--params: not FedNMF parameters: %v", err)
		}
	}
	cfg.K, cfg.Rounds = s.ks[0], s.rounds
	cfg.ClientFraction, cfg.ServerOpt, cfg.ServerLR = f.fraction, f.serverOpt, f.serverLR
	cfg.MILambda, cfg.LocalEpochs, cfg.Batch, cfg.LR = f.lambda, f.epochs, f.batch, f.lr
	cfg.Features, cfg.Clip, cfg.NoiseMultiplier = f.features, f.clip, f.z
	if on, _ := s.cmd.Flags().GetBool("secure-aggregation"); on {
		// Under secure aggregation DP-FedAvg's noise is distributed: each
		// party adds its share for t survivors (fednmf/secure.go).
		cfg.SecureThreshold = s.parties
		if t, _ := s.cmd.Flags().GetInt("threshold"); s.changed("threshold") {
			cfg.SecureThreshold = t
		}
		if n := s.parties; !cfg.DP() && cfg.SampleSize(n) < 2 {
			return cfg, usagef("--secure-aggregation: --client-fraction %g samples one of the %d parties a round, whose update the coordinator (which chose it) would learn whole: sample at least 2 (--client-fraction ≥ %.3g), or add DP-FedAvg's noise (--clip, --noise-multiplier)", cfg.WithDefaults().ClientFraction, n, 2/float64(n))
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// fednmfMethod is FedNMF and FedNMF+MI.
func fednmfMethod() *method {
	var f fednmfFlags
	parse := func(params json.RawMessage) fednmf.Config {
		cfg, _ := fednmf.ParseConfig(params)
		return cfg
	}
	return &method{
		alg: fednmf.Algorithm,
		summary: "fednmf (FedNMF, Si et al. 2022: each round a fraction --client-fraction of the parties runs --local-epochs of mini-batch SGD on NMF, " +
			"with --mi-lambda a mutual-information critic (FedNMF+MI), and sends the change of W; the coordinator aggregates by --server-opt " +
			"fedavg, fedadagrad, fedyogi or fedadam; not private unless --clip and --noise-multiplier turn on DP-FedAvg, whose noise " +
			"--secure-aggregation makes distributed)",
		rounds: fednmf.DefaultRounds,
		maxK:   fednmf.MaxTopics,
		flags:  f.register,
		params: func(s simSettings) (json.RawMessage, map[string]string, error) {
			cfg, err := f.config(s)
			if err != nil {
				return nil, nil, err
			}
			return configParams(cfg)
		},
		cost: func(params json.RawMessage, knobs costKnobs) ([]costPart, error) {
			cfg, err := fednmf.ParseConfig(params)
			if err != nil {
				return nil, err
			}
			ev := cfg.Events()
			if ev == nil {
				return nil, nil
			}
			if cfg.SecureThreshold > 0 {
				return []costPart{{release: fmt.Sprintf("DP-FedAvg's sums with distributed noise (charged for %d survivors)", cfg.SecureThreshold), events: ev, knobs: []string{knobs("rounds"), knobs("noise-multiplier")}}}, nil
			}
			return []costPart{{release: "DP-FedAvg's noised aggregates", events: ev, knobs: []string{knobs("rounds"), knobs("client-fraction")}}}, nil
		},
		statement: func(st *fed.Statement, params json.RawMessage, _ int) { fednmfStatement(st, parse(params)) },
		model:     func(json.RawMessage) string { return "nmf" },
		deploy: func(path string, params map[string]any) (json.RawMessage, error) {
			return checkedParams(path, params, fednmf.ParseConfig)
		},
	}
}

// fednmfStatement adds what FedNMF releases to a run's privacy statement.
func fednmfStatement(st *fed.Statement, cfg fednmf.Config) {
	cfg = cfg.WithDefaults()
	what := "W"
	if cfg.MILambda > 0 {
		what = "W and the critic θ"
	}
	t := cfg.SecureThreshold
	if !cfg.DP() {
		if t > 0 {
			st.Released = append(st.Released, fmt.Sprintf("to the coordinator, every round, only the sum over the surviving parties (at least %d, secure aggregation) of N_i times the change of %s on a grid of step 2^-%d and of N_i, zero for the parties not sampled: the sum of the sampled survivors' updates, which the coordinator knows, having sampled them (FedNMF is not private)", t, what, fednmf.SecureFracBits))
			st.Notes = append(st.Notes, "FedNMF without --clip and --noise-multiplier carries no privacy guarantee: secure aggregation hides a sampled party's update only among the other sampled parties that survive the round, and the model is an exact function of the documents.")
			return
		}
		st.Released = append(st.Released, fmt.Sprintf("the change of %s computed on every sampled party's documents, exactly, with its document count, in every round it is sampled (FedNMF is not private)", what))
		st.Notes = append(st.Notes, "FedNMF without --clip and --noise-multiplier carries no privacy guarantee: its updates are functions of the raw documents, sent without noise.")
		return
	}
	if st.Unit == "" {
		st.Unit = fednmf.UnitDocument
		st.Neighbouring = "one party (client) gains or loses any of its documents; a guarantee for a whole client holds for each of its documents"
	}
	if t > 0 {
		sigma := cfg.NoiseMultiplier * cfg.Clip
		st.Released = append(st.Released,
			fmt.Sprintf("to anyone, the coordinator included, every round: only the sum over the surviving parties (at least %d, secure aggregation) of the change of %s clipped to L2 norm S = %g (zero for a party not sampled, each sampled with probability C = %g), plus each party's share of distributed noise, a discrete Gaussian of standard deviation σ/√%d on every entry, so that the sum carries at least σ = z·S = %g·%g = %g", t, what, cfg.Clip, cfg.ClientFraction, t, cfg.NoiseMultiplier, cfg.Clip, sigma))
		st.Notes = append(st.Notes,
			"DP-FedAvg is an addition to FedNMF (the paper has no privacy); its unit is a whole party (client): the ε per document is the same as per client, not smaller",
			fmt.Sprintf("distributed noise: each party is charged for the worst case it accepted, exactly %d survivors, whose sum carries σ = %g: per round a discrete Gaussian release of sensitivity S = %g per client, composed by RDP over the rounds, every party every round, without amplification by sampling (the coordinator chose the sample)", t, sigma, cfg.Clip),
			"not protected: the number of parties")
		return
	}
	st.Released = append(st.Released,
		fmt.Sprintf("to the coordinator only: the change of %s of every sampled party, clipped to L2 norm S = %g (no noise: the coordinator is trusted with it)", what, cfg.Clip),
		fmt.Sprintf("to everyone else (the model every round and at the end): the mean of the clipped changes plus Gaussian noise of σ = z·S = %g·%g added by the coordinator, each party sampled with probability C = %g per round", cfg.NoiseMultiplier, cfg.Clip, cfg.ClientFraction))
	st.Notes = append(st.Notes,
		"DP-FedAvg is an addition to FedNMF (the paper has no privacy); its unit is a whole party (client): the ε per document is the same as per client, not smaller",
		"accounted by Rényi DP with amplification by Poisson sampling of the parties; every party is charged every round, sampled or not",
		"not protected: the parties' updates as the coordinator sees them, and the number of parties")
}
