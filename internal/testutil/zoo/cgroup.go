package zoo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Hierarchy says which cgroup interface throttles block I/O here.
type Hierarchy int

const (
	// V1 is the blkio controller: blkio.throttle.write_iops_device and
	// blkio.throttle.write_bps_device.
	V1 Hierarchy = 1
	// V2 is the unified hierarchy's io controller: io.max.
	V2 Hierarchy = 2
)

// Limits are a cgroup's write limits on one device; 0 is no limit.
type Limits struct {
	WriteIOPS int64
	WriteBPS  int64
}

// Cgroup is a cgroup of its own whose processes' writes to one block
// device are throttled by the kernel (blk-throttle), as a cloud volume
// caps IOPS and bandwidth. Processes join it with Wrap (before they do any
// I/O) or Join.
type Cgroup struct {
	// Path is the cgroup's directory.
	Path string
	// Device is the throttled block device, "MAJ:MIN".
	Device    string
	Hierarchy Hierarchy
}

// mountinfoCgroup finds in /proc/self/mountinfo's text where the blkio
// controller of cgroup v1 is mounted (preferred: a hybrid system's v2
// mount usually has no controllers) or, failing that, the cgroup2 mount.
func mountinfoCgroup(b []byte) (dir string, h Hierarchy, err error) {
	var v2 string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+3 > len(f) {
			continue
		}
		fstype, super := f[sep+1], f[sep+3]
		switch {
		case fstype == "cgroup" && contains(strings.Split(super, ","), "blkio"):
			return f[4], V1, nil
		case fstype == "cgroup2" && v2 == "":
			v2 = f[4]
		}
	}
	if v2 != "" {
		return v2, V2, nil
	}
	return "", 0, fmt.Errorf("%w: no cgroup v1 blkio or cgroup2 mount in /proc/self/mountinfo", ErrUnavailable)
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// DeviceOf returns the whole disk ("MAJ:MIN") under the filesystem that
// holds dir: blk-throttle takes rules on disks, not partitions.
func DeviceOf(dir string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return "", err
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	sys := filepath.Join("/sys/dev/block", dev)
	if _, err := os.Stat(sys); err != nil {
		return "", fmt.Errorf("%w: %s is on device %s, which is no block device (tmpfs, overlay, FUSE?)", ErrUnavailable, dir, dev)
	}
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		b, err := os.ReadFile(filepath.Join(sys, "..", "dev"))
		if err != nil {
			return "", fmt.Errorf("zoo: the disk of partition %s: %w", dev, err)
		}
		dev = strings.TrimSpace(string(b))
	}
	return dev, nil
}

// NewCgroup makes a cgroup named name whose writes to the disk under dir
// are held to lim. It fails with ErrUnavailable when there is no blkio
// or io controller, dir is on no block device, or this is not root.
func NewCgroup(dir, name string, lim Limits) (*Cgroup, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: cgroups need root", ErrUnavailable)
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	root, h, err := mountinfoCgroup(info)
	if err != nil {
		return nil, err
	}
	dev, err := DeviceOf(dir)
	if err != nil {
		return nil, err
	}
	if h == V2 {
		ctl, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
		if err != nil || !contains(strings.Fields(string(ctl)), "io") {
			return nil, fmt.Errorf("%w: cgroup2 at %s has no io controller", ErrUnavailable, root)
		}
		// Children get io only when the parent's subtree has it.
		if err := os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("+io"), 0); err != nil {
			return nil, fmt.Errorf("%w: enabling io in %s: %v", ErrUnavailable, root, err)
		}
	}
	c := &Cgroup{Path: filepath.Join(root, name), Device: dev, Hierarchy: h}
	if err := os.Mkdir(c.Path, 0o755); err != nil {
		return nil, fmt.Errorf("zoo: making cgroup %s: %w", c.Path, err)
	}
	if err := c.SetLimits(lim); err != nil {
		return nil, errors.Join(err, c.Remove())
	}
	return c, nil
}

// SetLimits changes the cgroup's write limits (0: none); the processes in
// it are held to the new ones from now on.
func (c *Cgroup) SetLimits(lim Limits) error {
	if c.Hierarchy == V2 {
		v := func(n int64) string {
			if n <= 0 {
				return "max"
			}
			return strconv.FormatInt(n, 10)
		}
		return c.write("io.max", fmt.Sprintf("%s wiops=%s wbps=%s", c.Device, v(lim.WriteIOPS), v(lim.WriteBPS)))
	}
	// v1: a rule of 0 removes the device's rule.
	if err := c.write("blkio.throttle.write_iops_device", fmt.Sprintf("%s %d", c.Device, max(lim.WriteIOPS, 0))); err != nil {
		return err
	}
	return c.write("blkio.throttle.write_bps_device", fmt.Sprintf("%s %d", c.Device, max(lim.WriteBPS, 0)))
}

func (c *Cgroup) write(file, v string) error {
	if err := os.WriteFile(filepath.Join(c.Path, file), []byte(v), 0); err != nil {
		return fmt.Errorf("zoo: writing %q to %s: %w", v, filepath.Join(c.Path, file), err)
	}
	return nil
}

// procs is the file a process's PID is written to, to move it in.
func (c *Cgroup) procs() string { return filepath.Join(c.Path, "cgroup.procs") }

// Join moves a running process (all its threads) into the cgroup. Prefer
// Wrap: what the process wrote before is not held back.
func (c *Cgroup) Join(pid int) error { return c.write("cgroup.procs", strconv.Itoa(pid)) }

// Wrap rewrites cmd, not yet started, so that it joins the cgroup before
// it runs: a shell writes its own PID to cgroup.procs, then execs cmd's
// program with its arguments. The shell's PID is the program's.
func (c *Cgroup) Wrap(cmd *exec.Cmd) {
	path := cmd.Path
	if cmd.Err != nil || !filepath.IsAbs(path) {
		if lp, err := exec.LookPath(cmd.Args[0]); err == nil {
			path, cmd.Err = lp, nil
		}
	}
	args := append([]string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, c.procs(), path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = "/bin/sh", args
}

// Writes returns the write I/Os and bytes the kernel counted for the
// cgroup on its device, from blkio.throttle.io_serviced and
// io_service_bytes (v1) or io.stat (v2).
func (c *Cgroup) Writes() (ios, bytes int64, err error) {
	if c.Hierarchy == V2 {
		b, err := os.ReadFile(filepath.Join(c.Path, "io.stat"))
		if err != nil {
			return 0, 0, err
		}
		ios, bytes = parseIOStat(b, c.Device)
		return ios, bytes, nil
	}
	b, err := os.ReadFile(filepath.Join(c.Path, "blkio.throttle.io_serviced"))
	if err != nil {
		return 0, 0, err
	}
	ios = parseBlkioStat(b, c.Device, "Write")
	if b, err = os.ReadFile(filepath.Join(c.Path, "blkio.throttle.io_service_bytes")); err != nil {
		return 0, 0, err
	}
	return ios, parseBlkioStat(b, c.Device, "Write"), nil
}

// parseBlkioStat reads "MAJ:MIN Op N" lines of a v1 blkio stat file.
func parseBlkioStat(b []byte, dev, op string) int64 {
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == dev && f[1] == op {
			n, _ := strconv.ParseInt(f[2], 10, 64)
			return n
		}
	}
	return 0
}

// parseIOStat reads v2's io.stat: "MAJ:MIN rbytes=.. wbytes=.. rios=.. wios=..".
func parseIOStat(b []byte, dev string) (wios, wbytes int64) {
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != dev {
			continue
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "wios":
				wios = n
			case "wbytes":
				wbytes = n
			}
		}
	}
	return wios, wbytes
}

// Remove moves the cgroup's remaining processes to the parent cgroup and
// removes it.
func (c *Cgroup) Remove() error {
	if b, err := os.ReadFile(c.procs()); err == nil {
		parent := filepath.Join(filepath.Dir(c.Path), "cgroup.procs")
		for _, pid := range strings.Fields(string(b)) {
			_ = os.WriteFile(parent, []byte(pid), 0)
		}
	}
	if err := os.Remove(c.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("zoo: removing cgroup %s: %w", c.Path, err)
	}
	return nil
}
