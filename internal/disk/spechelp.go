package disk

import (
	"strings"
	"unicode"
)

// DefaultsText returns, for a setting's name, its defaults as help shows
// them: " (default 100)", or " (default 0.1, --quick 0.2, --thorough
// 0.05)" when the presets differ; "" when no preset sets it. The presets
// are read once, when it is called.
func (sp Spec) DefaultsText() func(name string) string {
	byPreset := map[string]map[string]string{}
	for _, p := range Presets() {
		byPreset[p.Name] = sp.Defaults(p)
	}
	return func(name string) string {
		def := byPreset["default"][name]
		if def == "" {
			return ""
		}
		var others []string
		for _, p := range []string{"quick", "thorough"} {
			if v := byPreset[p][name]; v != "" && v != def {
				others = append(others, "--"+p+" "+v)
			}
		}
		if len(others) == 0 {
			return " (default " + def + ")"
		}
		return " (default " + def + ", " + strings.Join(others, ", ") + ")"
	}
}

// SpaceHint names the settings that make the workload smaller, for the
// message about free space.
func (sp Spec) SpaceHint() string {
	var flags []string
	for _, p := range sp.Params {
		if p.Name == "size" || p.Name == "db-size" {
			flags = append(flags, "--"+p.Name)
		}
	}
	if len(flags) == 0 {
		return "free some space, or use --quick"
	}
	return "free some space, or use a smaller " + strings.Join(flags, " or ") + " (or --quick)"
}

// Long is the workload's description as a sentence: its first letter
// capital, a full stop at the end.
func (sp Spec) Long() string {
	if sp.Description == "" {
		return ""
	}
	r := []rune(sp.Description)
	r[0] = unicode.ToUpper(r[0])
	return strings.TrimSuffix(string(r), ".") + "."
}
