// Package kubernetes holds no code: its tests check the Kubernetes manifests
// in this directory (parsed strictly into the Kubernetes API types), the
// run.sh that makes one Job per control-plane node from them, and the facts
// the repository's Dockerfile states about the binary it builds. How to use
// the manifests: docs/kubernetes.md.
package kubernetes
