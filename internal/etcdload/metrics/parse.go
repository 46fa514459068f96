package metrics

import (
	"bytes"
	"errors"
	"fmt"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ErrParse is returned by Parse for text that is not Prometheus' text
// exposition format.
var ErrParse = errors.New("not Prometheus text format")

// Families are parsed metric families by name.
type Families map[string]*dto.MetricFamily

// Parse reads Prometheus' text exposition format (what etcd serves on
// /metrics).
func Parse(b []byte) (fams Families, err error) {
	// expfmt's parser (prometheus/common v0.67.5) dereferences nil on some
	// malformed input, e.g. a line "{}" after a comment (found by
	// FuzzParse, kept in testdata/fuzz): such input is an error, not a
	// crash.
	defer func() {
		if r := recover(); r != nil {
			fams, err = nil, fmt.Errorf("%w: the parser failed on this input (%v)", ErrParse, r)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	return Families(parsed), nil
}
