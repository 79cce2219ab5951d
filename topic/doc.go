// Package topic holds the trained topic model shared by every method in
// fedtopic, its file format and exports, and inference of document-topic
// proportions θ for new documents with the topic-word matrix Φ fixed.
//
// A Model carries Φ (K rows of p(w|k) over V words), the vocabulary, the
// Dirichlet hyperparameters α and β, and the provenance that reproduces it:
// method, parameters, seed, iterations, rounds and the privacy each party
// spent. The topic model is latent Dirichlet allocation (Blei, Ng and
// Jordan, "Latent Dirichlet allocation", JMLR 3, 2003); inference is
// fold-in collapsed Gibbs sampling with Φ fixed (Griffiths and Steyvers,
// "Finding scientific topics", PNAS 101, 2004; Wallach, Murray,
// Salakhutdinov and Mimno, "Evaluation methods for topic models", ICML
// 2009).
//
// Usage:
//
//	if err := topic.Save("model.ftm", m); err != nil { ... }
//	m, err := topic.Load("model.ftm")
//	for _, wp := range m.TopWords(0, 10) { fmt.Println(wp.Word, wp.Prob) }
//	theta, err := m.Infer(ctx, docs, topic.InferConfig{Seed: 1})
//	err = topic.WriteJSON(w, m) // {"vocab": [...], "topic_word": [[...]]}
//
// The model file is versioned and self-describing (see FormatVersion and
// file.go): magic bytes, format version, a JSON header, the vocabulary, Φ
// as little-endian float64 and a CRC-32C checksum. Save writes atomically;
// Load checks the magic, version, length, checksum and the model's
// consistency, and fails with a message that says which.
//
// Determinism: Write and WriteJSON produce the same bytes for the same
// model; TopWords breaks ties by word id; Infer's result depends only on
// the model, the documents and InferConfig (seed included), not on the
// number of workers. Privacy: a Model is whatever its trainer released; this
// package adds no noise and spends no privacy budget. Its Provenance records
// the spend reported by the accountant, and θ inferred from a party's
// documents is as private as those documents.
package topic
