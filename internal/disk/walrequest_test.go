package disk

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestWALRequestConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		preset  string
		given   map[string]string
		mode    string
		runtime time.Duration
		bs      int
		bad     bool
	}{
		{name: "default preset, adaptive", preset: "default", mode: ModeAdaptive, runtime: time.Minute, bs: 2300},
		{name: "quick preset", preset: "quick", mode: ModeAdaptive, runtime: 20 * time.Second, bs: 2300},
		{name: "quick with its runtime given", preset: "quick", given: map[string]string{"runtime": "7s"}, mode: ModeAdaptive, runtime: 7 * time.Second, bs: 2300},
		{name: "a size runs to completion", preset: "default", given: map[string]string{"size": "22m"}, mode: ModeSize, bs: 2300},
		{name: "open loop takes the entry size", preset: "default", given: map[string]string{"rate": "1k", "entry-bytes": "500"}, mode: ModeAdaptive, runtime: time.Minute, bs: 500},
		{name: "rate with bs", preset: "default", given: map[string]string{"rate": "1k", "bs": "4k"}, bad: true},
		{name: "entry bytes without rate", preset: "default", given: map[string]string{"entry-bytes": "500"}, bad: true},
		{name: "size and count", preset: "default", given: map[string]string{"size": "22m", "count": "10"}, bad: true},
		{name: "bs over 64m", preset: "default", given: map[string]string{"bs": "65m"}, bad: true},
		{name: "bs larger than size", preset: "default", given: map[string]string{"bs": "4m", "size": "1m"}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := WALDefaults(tc.preset)
			r.P99, r.Confidence = 10*time.Millisecond, 0.95
			r.Given = func(s string) bool { _, ok := tc.given[s]; return ok }
			for k, v := range tc.given {
				switch k {
				case "runtime":
					r.Runtime = v
				case "size":
					r.Size = v
				case "bs":
					r.BlockSize = v
				case "rate":
					r.Rate = v
				case "entry-bytes":
					r.EntryBytes = 500
				case "count":
					r.Count = 10
				}
			}
			cfg, err := r.Config()
			if tc.bad {
				if !errors.Is(err, ErrBadParam) {
					t.Fatalf("err %v, want one wrapping ErrBadParam", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Mode != tc.mode || cfg.Runtime != tc.runtime || cfg.BlockSize != tc.bs {
				t.Errorf("mode %s, runtime %v, bs %d; want %s, %v, %d", cfg.Mode, cfg.Runtime, cfg.BlockSize, tc.mode, tc.runtime, tc.bs)
			}
			if cfg.Rule.Threshold != r.P99 || cfg.Rule.Confidence != 0.95 {
				t.Errorf("stop rule %+v: want the request's p99 and confidence", cfg.Rule)
			}
		})
	}
	if got := []string{WALDefaults("quick").Runtime, WALDefaults("thorough").Runtime}; !slices.Equal(got, []string{"20s", "5m0s"}) {
		t.Errorf("presets' runtimes %q", got)
	}
}
