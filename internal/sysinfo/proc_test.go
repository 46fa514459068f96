package sysinfo

import "testing"

func TestParseMemTotal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    uint64
		wantErr bool
	}{
		{name: "kB", in: "MemTotal:       24684092 kB\nMemFree:        24372416 kB\n", want: 24684092 * 1024},
		{name: "not first line", in: "MemFree: 1 kB\nMemTotal: 2 kB\n", want: 2048},
		{name: "no unit", in: "MemTotal: 4096\n", want: 4096},
		{name: "missing", in: "MemFree: 1 kB\n", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "no value", in: "MemTotal:\n", wantErr: true},
		{name: "not a number", in: "MemTotal: lots kB\n", wantErr: true},
		{name: "odd unit", in: "MemTotal: 1 MB\n", wantErr: true},
		{name: "overflow", in: "MemTotal: 18446744073709551615 kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMemTotal([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseMemTotal = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseCPUModel(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string
		wantOK bool
	}{
		{
			name:   "x86",
			in:     "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Processor\n\nprocessor\t: 1\nmodel name\t: Other\n",
			want:   "Intel(R) Xeon(R) Processor",
			wantOK: true,
		},
		{
			name:   "model name wins over earlier fallback",
			in:     "cpu\t: X\nmodel name\t: Y\n",
			want:   "Y",
			wantOK: true,
		},
		{name: "power", in: "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n", want: "POWER9 (raw), altivec supported", wantOK: true},
		{name: "old arm", in: "Processor\t: ARMv7 Processor rev 4 (v7l)\nprocessor\t: 0\n", want: "ARMv7 Processor rev 4 (v7l)", wantOK: true},
		{name: "arm64 has no model", in: "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", wantOK: false},
		{name: "empty value skipped", in: "model name\t:\nmodel name\t: Z\n", want: "Z", wantOK: true},
		{name: "empty", in: "", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseCPUModel([]byte(tt.in))
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("parseCPUModel = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
