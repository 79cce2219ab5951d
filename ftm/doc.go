// Package ftm implements Federated Topic Modeling (FTM) and its extension to
// SentenceLDA (iFTM).
package ftm
