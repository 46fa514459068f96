package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// maxScrapeBytes bounds a /metrics response; etcd's is about 100-300 KiB.
const maxScrapeBytes = 64 << 20

// scrapeClient is Scrape's client when none is given: without
// keep-alives, so no connection to a member outlives its scrape.
var scrapeClient = &http.Client{Transport: NoKeepAlive()}

// NoKeepAlive returns a clone of http.DefaultTransport that closes every
// connection after its request. A member's /metrics usually
// shares etcd's client port, whose connection multiplexer waits, when
// etcd stops, for every connection that has not yet sent a request. A
// keep-alive transport can hold exactly such a connection: one dialed for
// a request that was cancelled meanwhile (an interrupted run) is kept
// idle for later use, and etcd's Close then waits for it forever.
func NoKeepAlive() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	return tr
}

// Scrape fetches url with client (nil: a client without keep-alives) and
// parses it.
func Scrape(ctx context.Context, client *http.Client, url string) (Families, error) {
	if client == nil {
		client = scrapeClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: HTTP %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxScrapeBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	if len(b) > maxScrapeBytes {
		return nil, fmt.Errorf("%s sent more than %d bytes", url, maxScrapeBytes)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return f, nil
}

// ErrPollDeadline is matched by Poll's error when the condition did not
// hold by the deadline.
var ErrPollDeadline = errors.New("metrics: condition not met by the deadline")

// Poll scrapes url every `every` until done says its figures are there
// (true) or fails, ctx ends, or deadline passes. A scrape that fails is
// tried again: a member that is starting or busy may not answer yet.
func Poll(ctx context.Context, url string, every time.Duration, deadline time.Time, done func(Families) (bool, error)) error {
	var last error
	for {
		f, err := Scrape(ctx, nil, url)
		if err == nil {
			ok, err := done(f)
			if ok || err != nil {
				return err
			}
		} else {
			last = err
		}
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("%w: %s (last scrape: %v)", ErrPollDeadline, url, last)
			}
			return fmt.Errorf("%w: %s", ErrPollDeadline, url)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}
