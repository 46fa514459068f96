package verdict

import (
	"fmt"
	"strings"
)

// Check IDs of the storage rules: what the filesystem and its mount
// options say about durability, before any latency is looked at.
const (
	// CheckMountFlushDisabled FAILs when a mount option stops fdatasync
	// from flushing the device's cache.
	CheckMountFlushDisabled = "mount_flush_disabled"
	// CheckNetworkFS WARNs when the data sits on a network filesystem.
	CheckNetworkFS = "network_filesystem"
	// CheckContainerLayer WARNs when the data sits in a container's
	// writable layer (an overlay upper directory).
	CheckContainerLayer = "container_writable_layer"
)

// IsDurabilityFailure reports whether a verdict says that acknowledged
// writes are not made durable: reports put such a FAIL above every latency
// figure, because the latencies it comes with are fast for that reason.
func IsDurabilityFailure(v Verdict) bool {
	return v.Status == Fail && (v.Check == CheckMountFlushDisabled || v.Check == Defaults().ImplausibleSync.ID)
}

// MountRule is one mount option known to stop fdatasync from flushing
// the device's volatile write cache: with it the filesystem no longer sends
// cache flushes (REQ_PREFLUSH/REQ_FUA) when it commits, so a sync returns as
// soon as the device has the data in its cache, and a power failure loses
// writes etcd was told were durable.
type MountRule struct {
	FSTypes []string // the filesystems whose option this is
	Option  string   // as /proc/self/mountinfo shows it, e.g. "nobarrier", "barrier=0"
	Effect  string
	Source  string
}

// mountFix is what to do about any flush-disabling option.
const mountFix = "remount without it (its default, barrier=1 where the option takes a value) unless every layer below has a power-loss-protected cache, and even then etcd's documentation does not sanction it"

// MountRules are the options, from the kernel's filesystem documentation.
// Options that change what a crash leaves behind but still flush on
// fdatasync are deliberately absent: ext4 data=writeback and
// journal_async_commit, vfat flush (which flushes sooner, not less), and
// noatime/lazytime. xfs removed nobarrier in Linux 4.19 (mounting with it
// fails since), it is listed for older kernels.
func MountRules() []MountRule {
	return []MountRule{
		{FSTypes: []string{"ext4", "ext3"}, Option: "nobarrier",
			Effect: "the jbd2 journal commits without cache flushes, so fdatasync returns with the data in the disk's volatile cache",
			Source: "Linux Documentation/admin-guide/ext4.rst: barrier=<0|1(*)>, barrier(*), nobarrier - \"barrier=0 disables ... If disabled, ... filesystem corruption on power failure\"; ext4 shows barrier=0 as nobarrier in mountinfo"},
		{FSTypes: []string{"ext4", "ext3"}, Option: "barrier=0",
			Effect: "the jbd2 journal commits without cache flushes, so fdatasync returns with the data in the disk's volatile cache",
			Source: "Linux Documentation/admin-guide/ext4.rst: barrier=<0|1(*)> - \"barrier=0 disables ... write barriers in the jbd code\""},
		{FSTypes: []string{"btrfs"}, Option: "nobarrier",
			Effect: "btrfs writes its superblocks without flushing the device caches first, so a committed transaction may not be on media",
			Source: "btrfs documentation, Administration - mount options: barrier, nobarrier - \"disabling barriers ... risks corruption on power loss\" (Linux Documentation/filesystems/btrfs.rst before the docs moved)"},
		{FSTypes: []string{"xfs"}, Option: "nobarrier",
			Effect: "the XFS log is written without cache flushes",
			Source: "Linux Documentation/admin-guide/xfs.rst, Deprecated Mount Options: barrier/nobarrier removed in v4.19 (mounting with them fails since)"},
		{FSTypes: []string{"f2fs"}, Option: "nobarrier",
			Effect: "f2fs issues no cache_flush commands; writes stay ordered but may sit in the device's volatile cache",
			Source: "Linux Documentation/filesystems/f2fs.rst: nobarrier - \"no cache_flush commands are issued\""},
		{FSTypes: []string{"f2fs"}, Option: "fsync_mode=nobarrier",
			Effect: "fsync of a non-inode file issues no flush command",
			Source: "Linux Documentation/filesystems/f2fs.rst: fsync_mode=nobarrier - \"doesn't issue flush command for non-inode file\""},
		{FSTypes: []string{"nilfs2"}, Option: "nobarrier",
			Effect: "nilfs2 writes segments without cache flushes",
			Source: "Linux Documentation/filesystems/nilfs2.rst: barrier(*), nobarrier - \"enables/disables the use of write barriers\""},
		{FSTypes: []string{"gfs2"}, Option: "nobarrier",
			Effect: "gfs2 journal flushes are sent without cache flushes",
			Source: "gfs2(5): barrier/nobarrier - \"turns off barriers\"; Linux fs/gfs2/super.c"},
		{FSTypes: []string{"reiserfs"}, Option: "barrier=none",
			Effect: "the reiserfs journal commits without cache flushes",
			Source: "reiserfs(5) / Linux fs/reiserfs/super.c: barrier=none|flush (reiserfs was removed in Linux 6.13)"},
	}
}

// networkFSTypes are filesystems whose fdatasync crosses a network (and
// for FUSE, a user-space daemon) before it reaches any disk.
var networkFSTypes = []string{"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "afs", "lustre", "fuse", "fuseblk"}

// Sources of the storage warnings.
const (
	NetworkFSSource      = "OpenShift etcd practices (OKD recommended etcd practices): \"Avoid NAS or SAN setups ... Avoid network file system (NFS) protocols or other network based file systems\"; etcd op-guide/hardware.md: fast local SSD"
	ContainerLayerSource = "etcd op-guide/container.md runs etcd with --volume=${DATA_DIR}:/etcd-data, a host directory, never the image's layer; a container's writable layer is discarded with the container and its fdatasync goes through overlayfs"
	MountRuleSource      = "Linux filesystem documentation, per option (see the detail)"
)

// StorageLayer is one filesystem that holds etcd's data, directly or
// below a loop device (the file a loop device reads is on another
// filesystem, whose options matter as much).
type StorageLayer struct {
	Where        string // "the directory's filesystem", "loop0's backing file"
	FSType       string
	Source       string
	MountOptions string
	SuperOptions string
}

// StorageFigures are what the storage rules read: the filesystems on
// the path from the directory down to the disks.
type StorageFigures struct {
	Layers []StorageLayer
}

// optionSet splits comma-separated mount options into a set.
func optionSet(opts ...string) map[string]bool {
	set := map[string]bool{}
	for _, o := range opts {
		for _, f := range strings.Split(o, ",") {
			if f = strings.TrimSpace(f); f != "" {
				set[f] = true
			}
		}
	}
	return set
}

// MatchMountRules returns the rules a filesystem's options match.
func MatchMountRules(fsType, mountOptions, superOptions string) []MountRule {
	set := optionSet(mountOptions, superOptions)
	var out []MountRule
	for _, r := range MountRules() {
		if set[r.Option] && contains(r.FSTypes, fsType) {
			out = append(out, r)
		}
	}
	return out
}

// IsNetworkFS reports whether fsType reaches its storage over a network
// or through a user-space daemon (any fuse.* type).
func IsNetworkFS(fsType string) bool {
	return contains(networkFSTypes, fsType) || strings.HasPrefix(fsType, "fuse.") || strings.HasPrefix(fsType, "nfs")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// JudgeStorage applies the storage rules to every layer: a FAIL for any
// option that disables flushes, a WARN for a network filesystem or a
// container's writable layer. It returns nothing when no rule applies:
// a filesystem without such options earns no PASS here, since the options
// cannot show that the device honours flushes (the flush probe's figures
// speak to that).
func JudgeStorage(f StorageFigures) []Verdict {
	var vs []Verdict
	var failed []string
	for _, l := range f.Layers {
		for _, r := range MatchMountRules(l.FSType, l.MountOptions, l.SuperOptions) {
			failed = append(failed, fmt.Sprintf("%s (%s on %s) is mounted %s: %s [%s]", l.Where, l.FSType, l.Source, r.Option, r.Effect, r.Source))
		}
	}
	if len(failed) > 0 {
		vs = append(vs, Verdict{
			Check: CheckMountFlushDisabled, Title: "fdatasync flushes the disk cache", Status: Fail,
			Value: float64(len(failed)), Unit: "count", Limit: 0, Comparison: "<=", Source: MountRuleSource,
			Detail: "fast because writes are not made durable: " + strings.Join(failed, "; ") +
				". etcd can lose writes it acknowledged at a power failure or host crash, and every latency figure of this run is flattered by it; " + mountFix,
		})
	}
	for _, l := range f.Layers {
		switch {
		case IsNetworkFS(l.FSType):
			vs = append(vs, Verdict{
				Check: CheckNetworkFS, Title: "local storage", Status: Warn, Value: 1, Unit: "count", Limit: 0, Comparison: "<=", Source: NetworkFSSource,
				Detail: fmt.Sprintf("%s is %s (%s): fdatasync goes over a network or through a user-space daemon, whose latency comes and goes with it and whose durability is the server's or daemon's promise, which etcdbench cannot see; use a local SSD/NVMe disk (or a block volume) for etcd's data dir", l.Where, l.FSType, l.Source),
			})
		case l.FSType == "overlay":
			vs = append(vs, Verdict{
				Check: CheckContainerLayer, Title: "data outside the container's writable layer", Status: Warn, Value: 1, Unit: "count", Limit: 0, Comparison: "<=", Source: ContainerLayerSource,
				Detail: fmt.Sprintf("%s is an overlay (%s), a container's writable layer: its data goes with the container and its syncs pass through overlayfs to whatever holds the upper directory; mount a volume (a host directory, hostPath or a persistent volume on a local disk) at etcd's data dir and test that", l.Where, l.Source),
			})
		}
	}
	return vs
}
