// Package report renders a result.Result for people (Text) and for
// programs (JSON). Every reporter is a plain function from a result to an
// io.Writer, so a saved result can be rendered again in any format.
package report

import (
	"encoding/json"
	"fmt"
	"io"

	"etcdbench/internal/result"
)

// JSON writes r as indented JSON following result.SchemaID.
func JSON(w io.Writer, r *result.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}
