package tune

import (
	"fmt"
	"strings"
)

// Vary is one --vary: a setting and the values it takes, in the order
// given.
type Vary struct {
	Setting *Setting
	Values  []Value
}

// ParseVary parses one --vary argument, "NAME=v1,v2,...".
func ParseVary(arg string) (Vary, error) {
	name, list, ok := strings.Cut(arg, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return Vary{}, fmt.Errorf("%w %q: want NAME=v1,v2,... with NAME one of %s", ErrBadVary, arg, strings.Join(Names(), ", "))
	}
	s := Lookup(name)
	if s == nil {
		return Vary{}, fmt.Errorf("%w %q: unknown setting %q: want one of %s", ErrBadVary, arg, name, strings.Join(Names(), ", "))
	}
	if strings.TrimSpace(list) == "" {
		return Vary{}, fmt.Errorf("%w %q: no values: give them after the =, separated by commas", ErrBadVary, arg)
	}
	v := Vary{Setting: s}
	seen := map[string]string{}
	for _, raw := range strings.Split(list, ",") {
		if strings.TrimSpace(raw) == "" {
			return Vary{}, fmt.Errorf("%w %q: an empty value: separate the values by single commas", ErrBadVary, arg)
		}
		val, err := s.Parse(raw)
		if err != nil {
			return Vary{}, err
		}
		if first, dup := seen[val.Text]; dup {
			return Vary{}, fmt.Errorf("%w %q: %q and %q are the same value (%s): give each value once", ErrBadVary, arg, first, raw, val.Text)
		}
		seen[val.Text] = raw
		v.Values = append(v.Values, val)
	}
	return v, nil
}

// Assignment is one setting's value in a combination.
type Assignment struct {
	Setting *Setting
	Value   Value
}

// Combination is one point of the matrix.
type Combination struct {
	// Index is the combination's place in the matrix, from 0.
	Index  int
	Values []Assignment
	// Config is the base configuration with Values applied.
	Config Config
	// Warnings are what etcd warns about this configuration.
	Warnings []string
}

// ID names the combination in tables and file names: c1, c2...
func (c Combination) ID() string { return fmt.Sprintf("c%d", c.Index+1) }

// Label is the combination's settings, "snapshot-count=10000
// heartbeat-interval=100ms".
func (c Combination) Label() string {
	parts := make([]string, len(c.Values))
	for i, a := range c.Values {
		parts[i] = a.Setting.Name + "=" + a.Value.Text
	}
	return strings.Join(parts, " ")
}

// Settings maps each varied setting's name to its value.
func (c Combination) Settings() map[string]string {
	m := make(map[string]string, len(c.Values))
	for _, a := range c.Values {
		m[a.Setting.Name] = a.Value.Text
	}
	return m
}

// Expand returns every combination of the values of vs applied to base,
// in order: the first --vary changes slowest, as in nested loops. It
// refuses a setting varied twice, fewer than two combinations, and any
// combination etcd refuses (see Rules), so nothing runs unless every run
// can.
func Expand(base Config, vs []Vary) ([]Combination, error) {
	seen := map[string]bool{}
	total := 1
	for _, v := range vs {
		if seen[v.Setting.Name] {
			return nil, fmt.Errorf("%w: %s is varied twice: give all its values in one --vary %s=v1,v2,...", ErrBadVary, v.Setting.Name, v.Setting.Name)
		}
		seen[v.Setting.Name] = true
		if len(v.Values) == 0 {
			return nil, fmt.Errorf("%w: %s has no values", ErrBadVary, v.Setting.Name)
		}
		total *= len(v.Values)
	}
	if total < 2 {
		return nil, fmt.Errorf("%w: nothing to compare: tune needs at least two combinations, e.g. --vary snapshot-count=10000,100000", ErrBadVary)
	}
	out := make([]Combination, 0, total)
	idx := make([]int, len(vs)) // odometer over the values, last fastest
	for i := range total {
		c := Combination{Index: i, Config: base}
		for j, v := range vs {
			a := Assignment{Setting: v.Setting, Value: v.Values[idx[j]]}
			a.Setting.Apply(&c.Config, a.Value)
			c.Values = append(c.Values, a)
		}
		w, err := check(c.Label(), c.Config)
		if err != nil {
			return nil, err
		}
		c.Warnings = w
		out = append(out, c)
		for j := len(idx) - 1; j >= 0; j-- {
			if idx[j]++; idx[j] < len(vs[j].Values) {
				break
			}
			idx[j] = 0
		}
	}
	return out, nil
}

// Slot is one run of the schedule.
type Slot struct {
	Round       int // from 1
	Combination int // index into the combinations
}

// Schedule returns the order of the runs: round 1 runs the combinations
// in order, round 2 in reverse, round 3 in order again..., so that a
// drift over time (a filling disk, a warming cache, a neighbour's load)
// does not always favour the combinations that run first.
func Schedule(combinations, rounds int) []Slot {
	out := make([]Slot, 0, combinations*rounds)
	for r := 1; r <= rounds; r++ {
		for i := range combinations {
			c := i
			if r%2 == 0 {
				c = combinations - 1 - i
			}
			out = append(out, Slot{Round: r, Combination: c})
		}
	}
	return out
}
