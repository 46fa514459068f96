package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes path through a temporary file in the same
// directory, renamed into place once complete, so that a reader (a
// node_exporter scraping a textfile, a browser) never sees half a report.
// The file gets mode 0644; on an error the temporary file is removed.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
