// Package fedlda is FedLDA (Wang, Tong, Shi and Zhong, "Federated Latent
// Dirichlet Allocation: A Local Differential Privacy Based Framework",
// AAAI 2020): LDA trained by an untrusted collector from users who each
// hold one document and perturb what they send under local differential
// privacy.
package fedlda
