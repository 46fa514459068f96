package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// maxScrapeBytes bounds a /metrics response; etcd's is about 100-300 KiB.
const maxScrapeBytes = 64 << 20

// Scrape fetches url with client (http.DefaultClient when nil) and parses
// it.
func Scrape(ctx context.Context, client *http.Client, url string) (Families, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics: scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: scraping %s: HTTP %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxScrapeBytes+1))
	if err != nil {
		return nil, fmt.Errorf("metrics: reading %s: %w", url, err)
	}
	if len(b) > maxScrapeBytes {
		return nil, fmt.Errorf("metrics: %s sent more than %d bytes", url, maxScrapeBytes)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return f, nil
}
