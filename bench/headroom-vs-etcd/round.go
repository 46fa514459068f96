package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/testutil/zoo"
)

// measureRound sets the storage up afresh, measures its capacity, then
// drives a real etcd on it at each share while the exporter and
// Prometheus watch.
func measureRound(ctx context.Context, o options, env *cmp.Env, st zoo.Storage, bench, rules string, n int, progress io.Writer) (r round, err error) {
	r = round{N: n, Load: loadavg()}
	dir, err := os.MkdirTemp(env.Dir, st.Name+"-")
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	p, err := st.Setup(ctx, dir)
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, p.Close()) }()
	work, err := os.MkdirTemp("", name+"-work-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(work)

	fmt.Fprintf(progress, "round %d: etcdbench capacity --quick on %s (load %s) ...\n", n, st.Name, r.Load)
	c, err := cmp.RunChildIn(ctx, []int{0, 1}, p.Wrap, env.Etcdbench, "capacity", "--quick", "--dir", p.Dir, "--no-progress", "-o", "json")
	if err != nil {
		return r, err
	}
	est, err := parseEstimate(c.Stdout)
	if err != nil {
		return r, fmt.Errorf("capacity's result: %w", err)
	}
	r.Estimate, r.Volume = est.PutsPerSecond, est.VolumeWriteIOPS
	capFile, err := writeFile(work, "capacity.json", c.Stdout)
	if err != nil {
		return r, err
	}
	fmt.Fprintf(progress, "round %d: estimate %.0f puts/s (volume %.0f write IOPS)\n", n, r.Estimate, r.Volume)

	etcd, err := cmp.StartEtcdBinary(ctx, p.Wrap, p.Dir, o.Abs(o.Debian))
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, etcd.Stop()) }()
	xaddr, err := cmp.FreeAddr()
	if err != nil {
		return r, err
	}
	detach, _, err := cmp.Attach(ctx, 3*time.Second, env.Etcdbench, "exporter", "--listen", xaddr, "--data-dir", etcd.DataDir,
		"--capacity", capFile, "--interval", "1s")
	if err != nil {
		return r, err
	}
	defer func() {
		if _, derr := detach(); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	prom, err := startPrometheus(ctx, o.Prometheus, work, xaddr, rules)
	if err != nil {
		return r, err
	}
	defer prom.stop()

	for _, share := range o.Shares {
		l, err := driveLevel(ctx, o, bench, etcd.URL, "http://"+xaddr+"/metrics", prom, share, r.Estimate)
		r.Levels = append(r.Levels, l)
		if err != nil {
			return r, err
		}
		fmt.Fprintf(progress, "round %d: share %.2f: achieved %.1f puts/s (true share %.3f), exporter's ratio %.3f, alert %s (load %s)\n",
			n, share, l.Achieved, l.TrueShare, l.Ratio, firing(l.Firing), l.Load)
	}
	return r, nil
}

// driveLevel offers share x estimate puts/s for o.Level, reads the
// exporter's ratio at o.ReadAfter and the alert at the end.
func driveLevel(ctx context.Context, o options, bench, etcdURL, xmetrics string, prom *prometheus, share, estimate float64) (level, error) {
	l := level{Share: share, Offered: share * estimate, Load: loadavg()}
	rate := int(l.Offered + 0.5)
	pre := etcdload.CheckPresetAt(float64(rate))
	total := int64(float64(rate) * o.Level.Seconds())
	type done struct {
		c   cmp.Child
		err error
	}
	ran := make(chan done, 1)
	start := time.Now()
	go func() {
		c, err := cmp.RunChild(ctx, nil, bench, "--endpoints", etcdURL, "--conns", strconv.Itoa(pre.Conns), "--clients", strconv.Itoa(pre.Clients),
			"put", "--rate", strconv.Itoa(rate), "--total", strconv.FormatInt(total, 10),
			"--key-size", strconv.Itoa(pre.KeySize), "--val-size", strconv.Itoa(pre.ValSize), "--key-space-size", "1000000000")
		ran <- done{c, err}
	}()
	// The measurement's schedule: the exporter's window is the minute
	// before ReadAfter, all of it under this level's load.
	select {
	case <-time.After(time.Until(start.Add(o.ReadAfter))):
	case d := <-ran:
		return l, fmt.Errorf("benchmark ended before the ratio was read: %v%s", d.err, cmp.Tail(d.c.Stdout))
	}
	var err error
	if l.Ratio, err = scrapeValue(ctx, xmetrics, "etcdbench_capacity_used_ratio"); err != nil {
		return l, fmt.Errorf("the exporter's ratio: %w", err)
	}
	if l.PutRate, err = scrapeValue(ctx, xmetrics, "etcdbench_capacity_member_puts_per_second"); err != nil {
		return l, err
	}
	d := <-ran
	if d.err != nil {
		return l, d.err
	}
	rep, err := cmp.ParseBenchmark(d.c.Stdout)
	if rep.OpsPerSec == 0 {
		return l, fmt.Errorf("benchmark's summary: %v%s", err, cmp.Tail(d.c.Stdout))
	}
	l.Achieved, l.TrueShare = rep.OpsPerSec, rep.OpsPerSec/estimate
	l.Firing, err = prom.firing(ctx, "EtcdbenchNearCapacity")
	return l, err
}

// alertRules is a rule file with the near-capacity alert of path, its
// `for` set to d.
func alertRules(path string, d time.Duration) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.Index(s, "  - alert: EtcdbenchNearCapacity\n")
	if i < 0 {
		return "", fmt.Errorf("%s has no EtcdbenchNearCapacity", path)
	}
	block := s[i:]
	if j := strings.Index(block[1:], "  - alert: "); j >= 0 {
		block = block[:j+1]
	}
	if !strings.Contains(block, "    for: 10m\n") {
		return "", fmt.Errorf("%s: EtcdbenchNearCapacity's for is not 10m", path)
	}
	block = strings.Replace(block, "    for: 10m\n", "    for: "+d.String()+"\n", 1)
	return "groups:\n- name: headroom-vs-etcd\n  rules:\n" + block, nil
}

// prometheus is a Prometheus server scraping the exporter every second
// and evaluating the bench's rules every second.
type prometheus struct {
	url  string
	cmd  *exec.Cmd
	done chan error
}

func startPrometheus(ctx context.Context, bin, dir, target, rules string) (*prometheus, error) {
	rulesPath := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesPath, []byte(rules), 0o644); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nrule_files: [%q]\nscrape_configs:\n  - job_name: etcdbench\n    static_configs:\n      - targets: [%q]\n", rulesPath, target)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	addr, err := cmp.FreeAddr()
	if err != nil {
		return nil, err
	}
	p := &prometheus{url: "http://" + addr, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, "--config.file", cfg, "--storage.tsdb.path", filepath.Join(dir, "tsdb"), "--web.listen-address", addr)
	var out bytes.Buffer
	p.cmd.Stdout, p.cmd.Stderr = &out, &out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w (Debian: apt-get install prometheus)", bin, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	ready := func(status int, _ []byte) bool { return status == http.StatusOK }
	if err := cmp.WaitHTTP(ctx, p.url+"/-/ready", ready, p.done); err != nil {
		p.stop()
		return nil, fmt.Errorf("prometheus: %w%s", err, cmp.Tail(out.Bytes()))
	}
	return p, nil
}

func (p *prometheus) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// firing says whether alert is firing now.
func (p *prometheus) firing(ctx context.Context, alert string) (bool, error) {
	q := url.Values{"query": {fmt.Sprintf(`ALERTS{alertname=%q,alertstate="firing"}`, alert)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/api/v1/query?"+q.Encode(), nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return false, err
	}
	if r.Status != "success" {
		return false, fmt.Errorf("prometheus: %s", r.Error)
	}
	return len(r.Data.Result) > 0, nil
}

func loadavg() string {
	if v, err := cmp.LoadAverage(); err == nil {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return "?"
}
