// Package podman holds no code: its tests run the shipped pod specs in a
// real container runtime. They build the image FROM scratch with the
// static binary, map each field of the check Job's and the exporter
// DaemonSet's pod spec, and of the Helm chart's rendered pods, onto
// podman run's options (podman 4.3's kube play ignores hostPID and
// seccompProfile, so the mapping is done here, and a field it does not
// know fails the test), and run them: the Job must print its result
// record, the exporter must trace a real etcd on the host under the
// shipped seccomp profile; the chart's init container installs that
// profile into a stand-in kubelet seccomp directory first; the chart's
// capacity Job and exporter run the headroom loop on a real etcd. They
// skip without root, podman, runc, tracefs or etcd, and fail without them
// under CI=true. What they show: docs/kubernetes.md and docs/exporter.md.
package podman
