package units

import (
	"errors"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "2300", want: 2300},
		{in: "4k", want: 4096},
		{in: "4K", want: 4096},
		{in: "22m", want: 22 << 20},
		{in: "22MiB", want: 22 << 20},
		{in: "22mb", want: 22 << 20},
		{in: "1g", want: 1 << 30},
		{in: "1.5k", want: 1536},
		{in: " 8000 ", want: 8000},
		{in: "0", want: 0},
		{in: "", bad: true},
		{in: "abc", bad: true},
		{in: "1x", bad: true},
		{in: "-5", bad: true},
		{in: "k", bad: true},
		{in: "1e400", bad: true},
		{in: "99999999999999999999", bad: true},
		{in: "9999999999999t", bad: true},
		{in: "NaN", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseSize(c.in)
			if c.bad {
				if err == nil || !errors.Is(err, ErrSyntax) {
					t.Fatalf("ParseSize(%q) = %d, %v; want a syntax error", c.in, got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "60s", want: time.Minute},
		{in: "60", want: time.Minute},
		{in: "1.5", want: 1500 * time.Millisecond},
		{in: "1m30s", want: 90 * time.Second},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "0", want: 0},
		{in: "", bad: true},
		{in: "abc", bad: true},
		{in: "-1s", bad: true},
		{in: "-3", bad: true},
		{in: "1e30", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseDuration(c.in)
			if c.bad {
				if err == nil {
					t.Fatalf("ParseDuration(%q) = %v; want an error", c.in, got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		})
	}
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 22 << 20: "22.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"2300", "22m", "1.5GiB", "-1", "k", "1e3k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d: negative without error", s, n)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"60", "1m", "-1s", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseDuration(%q) = %v: negative without error", s, d)
		}
	})
}

func TestParseMillis(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"100", 100 * time.Millisecond, true},
		{" 1000 ", time.Second, true},
		{"150ms", 150 * time.Millisecond, true},
		{"1s", time.Second, true},
		{"0", 0, true},
		{"-5", 0, false},
		{"-5ms", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		got, err := ParseMillis(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseMillis(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

func FuzzParseMillis(f *testing.F) {
	for _, s := range []string{"100", "150ms", "-1", "9223372036854775807", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseMillis(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseMillis(%q) = %v: negative without error", s, d)
		}
	})
}
