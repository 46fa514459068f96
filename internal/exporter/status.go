package exporter

import (
	"html/template"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics (the registry, in the format the scraper asks
// for: the protobuf format carries the native histograms) and / (a
// short HTML status page).
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{
		Registry: e.reg, MaxRequestsInFlight: 4, Timeout: 10 * time.Second,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = statusPage.Execute(w, e.Status()) // a client that went away
	})
	return mux
}

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return time.Since(t).Round(time.Second).String() + " ago"
	},
}).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>etcdbench exporter</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}.err{color:#b00}</style></head>
<body><h1>etcdbench exporter</h1>
<p>Traces the fdatasync, fsync and write calls of every etcd process on this machine with eBPF. <a href="/metrics">/metrics</a> (alerts, dashboard and what each metric means: docs/exporter.md in etcdbench's repository) &middot; started {{ago .Started}} &middot; last scan of /proc {{ago .Scanned}} (every {{.Interval}}){{if .Filter.PIDs}} &middot; only pids {{.Filter.PIDs}}{{end}}{{if .Filter.DataDirs}} &middot; only data dirs {{.Filter.DataDirs}}{{end}}</p>
{{if .ScanErr}}<p class="err">Scanning /proc failed: {{.ScanErr}}</p>{{end}}
{{if not .Active}}<p id="waiting"><b>No etcd process found: waiting.</b> The exporter looks again every {{.Interval}} (metric etcdbench_waiting_for_etcd is 1).</p>
{{else}}<h2>Traced</h2><table id="active"><tr><th>member</th><th>data dir</th><th>pid</th><th>device</th><th>traced since</th><th>WAL sync p99</th><th>db sync p99</th></tr>
{{range .Active}}<tr><td>{{.Member}}</td><td>{{.DataDir}}</td><td>{{.PID}}</td><td>{{if .Device}}{{.Device}}{{else}}none: {{.DeviceNote}}{{end}}</td><td>{{if .Since.IsZero}}attaching{{else}}{{ago .Since}}{{end}}</td><td>{{.RecentWAL}}</td><td>{{.RecentDB}}</td></tr>
{{end}}</table>{{end}}
{{if .Gone}}<h2>No longer traced</h2><table id="gone"><tr><th>member</th><th>data dir</th><th>last pid</th><th>ended</th><th>why</th></tr>
{{range .Gone}}<tr><td>{{.Member}}</td><td>{{.DataDir}}</td><td>{{.PID}}</td><td>{{ago .Ended}}</td><td>{{if .Err}}<span class="err">{{.Err}}</span>{{else}}the process exited{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .CapacityFiles}}<h2 id="headroom">Headroom</h2><table id="capacity-files"><tr><th>capacity file</th><th>puts/s</th><th>volume write IOPS</th><th>measured on</th><th>state</th></tr>
{{range .CapacityFiles}}<tr><td>{{.Path}}</td>{{if .Err}}<td>-</td><td>-</td><td>-</td><td class="err">refused: {{.Err}}</td>{{else}}<td>{{printf "%.0f" .Estimate.PutsPerSecond}}{{if .Estimate.FromDiskSweep}} (disk sweep){{end}}</td><td>{{if .Estimate.VolumeWriteIOPS}}{{printf "%.0f" .Estimate.VolumeWriteIOPS}}{{else}}no cap found{{end}}</td><td>{{.Estimate.Hostname}} filesystem {{.Estimate.Filesystem}} device {{.Estimate.Device}}</td><td>read {{ago .Loaded}}</td>{{end}}</tr>
{{end}}</table>
{{if .Headroom}}<table id="headroom-members"><tr><th>member</th><th>data dir</th><th>capacity file</th><th>puts/s now</th><th>used ratio</th><th>volume write IOPS ratio</th></tr>
{{range .Headroom}}<tr><td>{{.Member}}</td><td>{{.DataDir}}</td><td>{{if .File}}{{.File}}{{else}}-{{end}}</td>{{if .HasRate}}<td>{{printf "%.1f" .PutRate}} (over {{.Span}}, {{.MetricsURL}})</td><td>{{printf "%.2f" .Ratio}}</td>{{else}}<td class="err" colspan="2">no ratio: {{.Reason}}</td>{{end}}<td>{{if .HasIOPS}}{{printf "%.2f" .IOPSRatio}}{{else}}-{{end}}</td></tr>
{{end}}</table>{{end}}{{end}}
</body></html>
`))
