package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// scrapeEvery reads url every d until ctx ends, as Prometheus would.
func scrapeEvery(ctx context.Context, url string, d time.Duration) error {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := scrape(ctx, url); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

// scrape returns the body of url.
func scrape(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping the exporter: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping the exporter: %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// scrapeWALSyncs is the exporter's count of WAL syncs so far.
func scrapeWALSyncs(ctx context.Context, url string) (float64, error) {
	b, err := scrape(ctx, url)
	if err != nil {
		return 0, err
	}
	return walSyncs(b)
}

// walSyncs sums etcdbench_syncs_total over the WAL's series in a
// text-format scrape.
func walSyncs(scrape []byte) (float64, error) {
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(scrape))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "etcdbench_syncs_total{") || !strings.Contains(line, `file="wal"`) {
			continue
		}
		f := strings.Fields(line[strings.LastIndexByte(line, '}')+1:])
		if len(f) == 0 {
			return 0, fmt.Errorf("no value in %q", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("value of %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// residentBytes is process pid's resident memory (VmRSS).
func residentBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
