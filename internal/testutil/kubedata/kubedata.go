// Package kubedata fills an etcd with a key space written the way
// kube-apiserver writes it, for tests and benches that need one: objects
// built with k8s.io/api types and encoded with apimachinery's protobuf
// serializer (the 4-byte "k8s\x00" envelope kube-apiserver stores), a
// custom resource as JSON, under /registry keys, through a real etcd's
// client. It writes the usual culprits of a growing etcd: events with
// leases (one lease for several events, as the apiserver reuses them),
// Helm release history kept as Secrets, node Leases in kube-node-lease
// rewritten like the kubelet's heartbeats; then a compaction, and more
// heartbeats, pod updates and deletes after it so history remains.
package kubedata

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"

	"etcdbench/internal/etcdcluster"
)

// Config says how much of each kind to write. Zero fields write none of
// that kind.
type Config struct {
	// Namespaces the namespaced objects are spread over.
	Namespaces int
	// Nodes are Node objects (/registry/minions/) and each node's Lease
	// in kube-node-lease, written NodeLeaseWrites times in all (half
	// before the compaction, half after).
	Nodes, NodeLeaseWrites int
	// Pods are written once; after the compaction PodUpdates of them
	// are updated once more and PodDeletes deleted.
	Pods, PodUpdates, PodDeletes int
	// Events each carry a lease of EventTTL, one lease for every
	// EventsPerLease events.
	Events, EventsPerLease int
	EventTTL               time.Duration
	// ConfigMaps and Secrets of about ValueBytes of data each.
	ConfigMaps, Secrets int
	ValueBytes          int
	// HelmReleases each keep HelmRevisions release Secrets
	// (sh.helm.release.v1.<name>.v<N>) of about HelmBytes each.
	HelmReleases, HelmRevisions, HelmBytes int
	// CustomResources are JSON objects of example.com's widgets.
	CustomResources int
	// Compact compacts at the revision before the second half of the
	// node lease writes.
	Compact bool
	// TargetBytes, when above 0, adds ConfigMaps of ValueBytes (in
	// namespace "fill") until the member's db reaches this size.
	TargetBytes int64
	// Clients is how many writers run at once (0: 8).
	Clients int
	// Seed makes the content repeatable.
	Seed uint64
}

// Small is a key space that holds every culprit at test size.
func Small() Config {
	return Config{
		Namespaces: 3, Nodes: 4, NodeLeaseWrites: 1200,
		Pods: 60, PodUpdates: 20, PodDeletes: 10,
		Events: 1500, EventsPerLease: 10, EventTTL: time.Hour,
		ConfigMaps: 30, Secrets: 20, ValueBytes: 2048,
		HelmReleases: 2, HelmRevisions: 15, HelmBytes: 4 << 10,
		CustomResources: 10, Compact: true, Seed: 1,
	}
}

// Written is what Write did, as etcd answered it.
type Written struct {
	// Revision is the store's revision at the end; CompactRevision the
	// revision compacted at (0: none).
	Revision, CompactRevision int64
	// Leases granted (events' leases).
	Leases int
	// Fill is the number of ConfigMaps TargetBytes added.
	Fill int
}

// The key layout kube-apiserver uses (its etcd prefix is /registry).
const (
	Prefix     = "/registry/"
	CRGroup    = "example.com"
	CRResource = "widgets"
	// NodeLeaseNamespace is where the kubelets' heartbeats live.
	NodeLeaseNamespace = "kube-node-lease"
)

// writer holds the encoder and the client of one Write.
type writer struct {
	cli   *clientv3.Client
	codec *protobuf.Serializer
	rnd   *rand.Rand
	mu    sync.Mutex // guards rnd
}

// Write fills etcd through cli as cfg says.
func Write(ctx context.Context, cli *clientv3.Client, cfg Config) (Written, error) {
	var out Written
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return out, err
	}
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		return out, err
	}
	w := &writer{cli: cli, codec: protobuf.NewSerializer(scheme, scheme), rnd: rand.New(rand.NewPCG(cfg.Seed, 33))}
	clients := cfg.Clients
	if clients <= 0 {
		clients = 8
	}
	ns := func(i int) string { return fmt.Sprintf("ns-%d", i%max(cfg.Namespaces, 1)) }

	steps := []func() error{
		func() error {
			return w.each(ctx, clients, cfg.Nodes, func(i int) error {
				return w.put(ctx, Prefix+"minions/"+nodeName(i), node(i), 0)
			})
		},
		func() error {
			return w.each(ctx, clients, cfg.Pods, func(i int) error {
				return w.put(ctx, Prefix+"pods/"+ns(i)+"/"+podName(i), w.pod(i, ns(i), 1), 0)
			})
		},
		func() error {
			n, err := w.events(ctx, clients, cfg, ns)
			out.Leases = n
			return err
		},
		func() error {
			return w.each(ctx, clients, cfg.ConfigMaps, func(i int) error {
				return w.put(ctx, Prefix+"configmaps/"+ns(i)+"/"+fmt.Sprintf("config-%d", i), w.configMap(i, ns(i), cfg.ValueBytes), 0)
			})
		},
		func() error {
			return w.each(ctx, clients, cfg.Secrets, func(i int) error {
				return w.put(ctx, Prefix+"secrets/"+ns(i)+"/"+fmt.Sprintf("token-%d", i), w.secret(i, ns(i), cfg.ValueBytes), 0)
			})
		},
		func() error {
			return w.each(ctx, clients, cfg.HelmReleases*cfg.HelmRevisions, func(i int) error {
				rel, v := i/cfg.HelmRevisions, i%cfg.HelmRevisions+1
				name := HelmSecretName(releaseName(rel), v)
				return w.put(ctx, Prefix+"secrets/"+ns(rel)+"/"+name, w.helm(rel, v, ns(rel), cfg.HelmBytes), 0)
			})
		},
		func() error {
			return w.each(ctx, clients, cfg.CustomResources, func(i int) error {
				return w.putRaw(ctx, Prefix+CRGroup+"/"+CRResource+"/"+ns(i)+"/"+fmt.Sprintf("widget-%d", i), w.widget(i, ns(i)), 0)
			})
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return out, err
		}
	}
	half := cfg.NodeLeaseWrites / 2
	if err := w.heartbeats(ctx, clients, cfg.Nodes, 0, half); err != nil {
		return out, err
	}
	if cfg.Compact {
		r, err := cli.Get(ctx, "compact-revision-probe", clientv3.WithCountOnly())
		if err != nil {
			return out, err
		}
		if _, err := cli.Compact(ctx, r.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
			return out, err
		}
		out.CompactRevision = r.Header.Revision
	}
	if err := w.heartbeats(ctx, clients, cfg.Nodes, half, cfg.NodeLeaseWrites); err != nil {
		return out, err
	}
	if err := w.each(ctx, clients, cfg.PodUpdates, func(i int) error {
		return w.put(ctx, Prefix+"pods/"+ns(i)+"/"+podName(i), w.pod(i, ns(i), 2), 0)
	}); err != nil {
		return out, err
	}
	if err := w.each(ctx, clients, cfg.PodDeletes, func(i int) error {
		i = cfg.Pods - 1 - i // the last ones, not those updated
		_, err := cli.Delete(ctx, Prefix+"pods/"+ns(i)+"/"+podName(i))
		return err
	}); err != nil {
		return out, err
	}
	if cfg.TargetBytes > 0 {
		n, err := w.fill(ctx, clients, cfg)
		out.Fill = n
		if err != nil {
			return out, err
		}
	}
	r, err := cli.Get(ctx, "revision-probe", clientv3.WithCountOnly())
	if err != nil {
		return out, err
	}
	out.Revision = r.Header.Revision
	return out, nil
}

// HelmSecretName is the name Helm 3 gives the Secret of a release's
// revision v.
func HelmSecretName(release string, v int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, v)
}

func nodeName(i int) string    { return fmt.Sprintf("node-%d", i) }
func podName(i int) string     { return fmt.Sprintf("app-%d-7d9f8c6b5-x%04d", i%7, i) }
func releaseName(i int) string { return fmt.Sprintf("release-%d", i) }

// each runs f(0..n-1) on clients goroutines, stopping at the first error.
func (w *writer) each(ctx context.Context, clients, n int, f func(int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(clients, max(n, 0)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// put stores obj as kube-apiserver does: protobuf in the k8s envelope.
func (w *writer) put(ctx context.Context, key string, obj runtime.Object, lease clientv3.LeaseID) error {
	var b bytes.Buffer
	if err := w.codec.Encode(obj, &b); err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	return w.putRaw(ctx, key, b.Bytes(), lease)
}

func (w *writer) putRaw(ctx context.Context, key string, val []byte, lease clientv3.LeaseID) error {
	var opts []clientv3.OpOption
	if lease != 0 {
		opts = append(opts, clientv3.WithLease(lease))
	}
	if _, err := w.cli.Put(ctx, key, string(val), opts...); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// noise is n random bytes (incompressible, as encrypted or gzipped data
// is), base64-sized.
func (w *writer) noise(n int) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + w.rnd.IntN(26))
	}
	return b
}

func meta(name, ns string, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: ns, UID: types.UID(fmt.Sprintf("0c5f4b1e-%04d-4a8b-9d2e-%012d", i%10000, i)),
		CreationTimestamp: metav1.Date(2026, 11, 1, 12, 0, i%60, 0, time.UTC),
		Labels:            map[string]string{"app": fmt.Sprintf("app-%d", i%7), "tier": "backend"},
	}
}

func (w *writer) pod(i int, ns string, gen int) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: meta(podName(i), ns, i),
		Spec: corev1.PodSpec{
			NodeName: nodeName(i % 4),
			Containers: []corev1.Container{{
				Name: "app", Image: fmt.Sprintf("registry.example.com/app-%d:1.%d", i%7, gen),
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "REPLICA", Value: fmt.Sprint(i)}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.%d.%d", i/250, i%250),
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, Message: string(w.noise(64 * gen))}}},
	}
	p.Generation = int64(gen)
	return p
}

func node(i int) *corev1.Node {
	return &corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: nodeName(i), Labels: map[string]string{"kubernetes.io/hostname": nodeName(i)}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")},
			Images:   []corev1.ContainerImage{{Names: []string{"registry.example.com/app:1.0"}, SizeBytes: 1 << 28}},
		},
	}
}

func nodeLease(i, beat int) *coordinationv1.Lease {
	holder, secs := nodeName(i), int32(40)
	renew := metav1.NewMicroTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(beat) * 10 * time.Second))
	return &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: nodeName(i), Namespace: NodeLeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &renew},
	}
}

// heartbeats writes node leases from write from to write to (counted
// over all nodes, round robin), as kubelets renew them.
func (w *writer) heartbeats(ctx context.Context, clients, nodes, from, to int) error {
	if nodes == 0 {
		return nil
	}
	return w.each(ctx, min(clients, nodes), to-from, func(k int) error {
		k += from
		i := k % nodes
		return w.put(ctx, Prefix+"leases/"+NodeLeaseNamespace+"/"+nodeName(i), nodeLease(i, k/nodes), 0)
	})
}

// events writes cfg.Events events, each batch of EventsPerLease under
// one lease, and returns the leases granted.
func (w *writer) events(ctx context.Context, clients int, cfg Config, ns func(int) string) (int, error) {
	if cfg.Events == 0 {
		return 0, nil
	}
	per := max(cfg.EventsPerLease, 1)
	n := (cfg.Events + per - 1) / per
	leases := make([]clientv3.LeaseID, n)
	ttl := max(int64(cfg.EventTTL.Seconds()), 60)
	for j := range leases {
		l, err := w.cli.Grant(ctx, ttl)
		if err != nil {
			return j, err
		}
		leases[j] = l.ID
	}
	err := w.each(ctx, clients, cfg.Events, func(i int) error {
		pod := podName(i % max(cfg.Pods, 1))
		name := fmt.Sprintf("%s.%x", pod, 0x187a0000+i)
		e := &corev1.Event{
			TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
			ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns(i)},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns(i), Name: pod, APIVersion: "v1"},
			Reason:         "BackOff", Type: corev1.EventTypeWarning, Count: int32(i%9 + 1),
			Message: "Back-off restarting failed container app in pod " + pod + ": " + string(w.noise(80)),
			Source:  corev1.EventSource{Component: "kubelet", Host: nodeName(i % 4)},
		}
		return w.put(ctx, Prefix+"events/"+ns(i)+"/"+name, e, leases[i/per])
	})
	return n, err
}

func (w *writer) configMap(i int, ns string, size int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(fmt.Sprintf("config-%d", i), ns, i),
		Data:       map[string]string{"config.yaml": string(w.noise(size))},
	}
}

func (w *writer) secret(i int, ns string, size int) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(fmt.Sprintf("token-%d", i), ns, i),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"token": w.noise(size)},
	}
}

// helm is a release's revision as Helm 3 stores it: a Secret of type
// helm.sh/release.v1 whose "release" holds the gzipped, base64 release.
func (w *writer) helm(rel, v int, ns string, size int) *corev1.Secret {
	name := releaseName(rel)
	m := meta(HelmSecretName(name, v), ns, rel*1000+v)
	m.Labels = map[string]string{"owner": "helm", "name": name, "status": "superseded", "version": fmt.Sprint(v)}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: m,
		Type: "helm.sh/release.v1", Data: map[string][]byte{"release": w.noise(size)},
	}
}

// widget is a custom resource, stored as JSON as the apiserver stores
// custom resources.
func (w *writer) widget(i int, ns string) []byte {
	b, _ := json.Marshal(map[string]any{ // a map of strings always marshals
		"apiVersion": CRGroup + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": fmt.Sprintf("widget-%d", i), "namespace": ns, "uid": fmt.Sprintf("w-%d", i), "generation": 1},
		"spec":     map[string]any{"size": i, "description": string(w.noise(300))},
	})
	return append(b, '\n')
}

// fill adds ConfigMaps until the member's db reaches cfg.TargetBytes.
func (w *writer) fill(ctx context.Context, clients int, cfg Config) (int, error) {
	size := max(cfg.ValueBytes, 1024)
	const batch = 512
	n := 0
	for {
		st, err := w.cli.Status(ctx, w.cli.Endpoints()[0])
		if err != nil {
			return n, err
		}
		if st.DbSize >= cfg.TargetBytes {
			return n, nil
		}
		base := n
		if err := w.each(ctx, clients, batch, func(i int) error {
			i += base
			return w.put(ctx, Prefix+"configmaps/fill/"+fmt.Sprintf("fill-%d", i), w.configMap(i, "fill", size), 0)
		}); err != nil {
			return n, err
		}
		n += batch
	}
}

// Embedded starts an embedded etcd of one member in dir (its fsyncs
// off: the content, not the disk, is what is made), writes cfg into it,
// calls before (when not nil) with a client and the member's endpoint
// while it still runs, stops it, and returns the member's data dir.
func Embedded(ctx context.Context, dir string, cfg Config, before func(cli *clientv3.Client, endpoint string) error) (string, Written, error) {
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: dir, Members: 1, UnsafeNoFsync: true, QuotaBackendBytes: 8 << 30})
	if err != nil {
		return "", Written{}, err
	}
	defer c.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return "", Written{}, err
	}
	defer cli.Close()
	w, err := Write(ctx, cli, cfg)
	if err == nil && before != nil {
		err = before(cli, c.Endpoints()[0])
	}
	return filepath.Join(dir, "member0"), w, err
}
