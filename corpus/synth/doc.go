// Package synth generates corpora from LDA's generative process with known
// topics, for testing that samplers recover what was planted.
//
// The process is that of Blei, Ng and Jordan, "Latent Dirichlet Allocation",
// JMLR 3 (2003), §3: topic-word distributions φ_k (rows of Φ) are drawn or
// planted, each document d draws θ_d ~ Dirichlet(α) and a length, and every
// token draws a topic z ~ θ_d and a word w ~ φ_z. With SentenceLen > 0 the
// documents are cut into sentences and all words of a sentence share one
// topic, the generative process of SentenceLDA (Balikas, Amini and Clausel,
// "On a Topic Model for Sentences", SIGIR 2016).
//
// Usage:
//
//	data, err := synth.Generate(synth.Config{K: 10, V: 500, Docs: 2000, Structure: synth.Planted}, rng.Derive(seed, "synth"))
//	// data.Corpus is ready to train on; data.Phi and data.Theta are the truth.
//
// Determinism: the output is a function of the Config and the stream of the
// *rand.Rand alone. Privacy: the data are synthetic; nothing about real text
// is involved.
package synth
