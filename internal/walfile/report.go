package walfile

import (
	"fmt"

	"etcdbench/internal/result"
)

// WorkloadName names the workload record of 'etcdbench diagnose wal'.
const WorkloadName = "diagnose-wal"

// syncCaveat says how bytes per sync are inferred from the segments and
// where the inference is off.
const syncCaveat = "bytes per sync are inferred from the records: etcd's WAL.Save appends a Save's entries and then its raft hard state to a 128 KiB page buffer, and when raft.MustSync holds (new entries, or a new term or vote) flushes the buffer with one write() and calls fdatasync(); so the bytes from one such state record to the next approximate one write()+fdatasync batch. Caveats: a Save with entries but an unchanged hard state writes no state record, so its entries count into the next batch (fewer, larger batches than real); a batch over 128 KiB is several write() calls before its one fdatasync; only the segments still on disk are seen (etcd purges old ones), so this is recent history; a follower's and a leader's WAL differ"

// BSRule says why the recommended --bs is what it is.
const BSRule = "the median bytes per write+fdatasync, rounded to two significant digits (the sync latency depends on the 4 KiB pages a write touches, not on the last byte; the median is the typical batch, not pulled up by rare large ones)"

// Recommendation is the 'etcdbench disk wal' run that matches a WAL.
type Recommendation struct {
	BS      int64  // --bs
	Median  int64  // the median bytes per write+fdatasync it comes from
	P90     int64  // the heavier end, for a second run
	DataDir string // --dir: etcd's data dir, on the disk under the WAL
}

// Command is the ready command line.
func (r Recommendation) Command() string {
	return fmt.Sprintf("etcdbench disk wal --dir %s --bs %d", shellQuote(r.DataDir), r.BS)
}

// Note is the recommendation in a sentence with its command line.
func (r Recommendation) Note() string {
	return fmt.Sprintf("recommended --bs %d: %s; median %d, p90 %d bytes. Run: %s", r.BS, BSRule, r.Median, r.P90, r.Command())
}

// Recommend returns the disk test matching the decoded WAL; ok is false
// when no sync was seen (an empty or brand-new WAL).
func (p *Profile) Recommend(dataDir string) (Recommendation, bool) {
	if p.Syncs() == 0 {
		return Recommendation{}, false
	}
	m := p.BytesPerSync.Quantile(0.5)
	return Recommendation{BS: RecommendBS(m), Median: m, P90: p.BytesPerSync.Quantile(0.9), DataDir: dataDir}, true
}

// Workload is the profile as a result record for the text and JSON reporters.
func (p *Profile) Workload(dirs Dirs) result.Workload {
	var total int64
	for _, s := range p.Segments {
		total += s.Used
	}
	wl := result.Workload{
		Name:        WorkloadName,
		Description: "etcd's real WAL write pattern, decoded from its segment files (offline, read-only)",
		Parameters: map[string]any{
			"source": "data-dir", "data_dir": dirs.DataDir, "wal_dir": dirs.WALDir, "segments": len(p.Segments),
		},
		Stop:  result.Stop{Mode: "data-dir", Reason: fmt.Sprintf("decoded %d segment files", len(p.Segments))},
		Ops:   p.Syncs(),
		Bytes: total,
	}
	add := func(name string, v float64, unit, desc string) {
		wl.Figures = append(wl.Figures, result.Figure{Name: name, Value: v, Unit: unit, Description: desc})
	}
	add("records", float64(p.Records), "count", "WAL records decoded")
	add("entry_records", float64(p.Entries), "count", "raft entries (one per proposal: put, txn, lease...)")
	add("state_records", float64(p.States), "count", "hard states (one per Save that changed it)")
	add("syncs_inferred", float64(p.Syncs()), "count", "write()+fdatasync batches inferred")
	SizeFigures(add, "record_bytes", &p.RecordBytes, "record length (protobuf, without length word and padding)")
	SizeFigures(add, "frame_bytes", &p.FrameBytes, "bytes on disk per record (8-byte length word + record + padding to 8)")
	SizeFigures(add, "entry_frame_bytes", &p.EntryFrameBytes, "bytes on disk per entry record")
	SizeFigures(add, "entry_data_bytes", &p.EntryDataBytes, "payload of an entry (the serialized request: key, value...)")
	SizeFigures(add, "entries_per_save", &p.EntriesPerSave, "entries between consecutive state records")
	SizeFigures(add, "bytes_per_sync", &p.BytesPerSync, "bytes written per write()+fdatasync batch (inferred)")
	add("bytes_per_sync_mean", p.BytesPerSync.Mean(), "B", "mean bytes per batch")
	if rec, ok := p.Recommend(dirs.DataDir); ok {
		add("recommended_bs", float64(rec.BS), "B", "--bs for etcdbench disk wal")
		wl.Parameters["recommended_bs"] = rec.BS
		wl.Notes = append(wl.Notes, rec.Note())
	} else {
		wl.Notes = append(wl.Notes, "no fdatasync batch found in the WAL (a new or empty member): no --bs to recommend; the fio recipe's 2300 is the usual stand-in")
	}
	wl.Notes = append(wl.Notes, syncCaveat)
	for i, s := range p.Segments {
		if n := tailNote(s, i == len(p.Segments)-1); n != "" {
			wl.Notes = append(wl.Notes, n)
		}
	}
	return wl
}

// SizeFigures adds the p50, p90, p99 and max of a size distribution.
func SizeFigures(add func(string, float64, string, string), name string, s *Sizes, what string) {
	unit := "B"
	if name == "entries_per_save" {
		unit = "count"
	}
	add(name+"_p50", float64(s.Quantile(0.5)), unit, what+", median")
	add(name+"_p90", float64(s.Quantile(0.9)), unit, "p90")
	add(name+"_p99", float64(s.Quantile(0.99)), unit, "p99")
	add(name+"_max", float64(s.Max()), unit, "max")
}

// shellQuote quotes a path for a copy-and-paste command line when needed.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '.' || c == '-' || c == '_' || c == '+' || c == ':' || c == ',' || c == '=' || c == '@') {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	out := "'"
	for _, c := range s {
		if c == '\'' {
			out += `'\''`
		} else {
			out += string(c)
		}
	}
	return out + "'"
}
