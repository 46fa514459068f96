package tune

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"etcdbench/internal/report"
	"etcdbench/internal/result"
)

// FileName is the name run r of combination c is saved under:
// tune-<tune id>-<combination>-r<round>-<settings>.json, e.g.
// tune-20261122T050000Z-c2-r1-snapshot-count_100000.json. The tune id
// keeps two tunes saved into one directory apart; a directory value is
// shortened to its last element.
func FileName(tuneID string, c Combination, round int) string {
	parts := []string{"tune", tuneID, c.ID(), fmt.Sprintf("r%d", round)}
	for _, a := range c.Values {
		v := a.Value.Text
		if a.Setting.Name == "dir" {
			v = filepath.Base(v)
		}
		parts = append(parts, a.Setting.Name+"_"+v)
	}
	return sanitize(strings.Join(parts, "-")) + ".json"
}

// sanitize keeps letters, digits, '.', '_' and '-' and replaces the rest.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// Save writes res as JSON (report.JSON) into dir under name, through a
// temporary file renamed into place so that a reader never sees half of
// it, and returns its path.
func Save(dir, name string, res *result.Result) (string, error) {
	path := filepath.Join(dir, name)
	err := report.WriteFileAtomic(path, func(w io.Writer) error { return report.JSON(w, res) })
	if err != nil {
		return "", fmt.Errorf("saving a run's result into --save-dir: %w", err)
	}
	return path, nil
}
