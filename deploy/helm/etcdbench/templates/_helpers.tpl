{{/* The chart's name, or nameOverride. */}}
{{- define "etcdbench.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The objects' name: fullnameOverride, else the release name, with the chart's name when the release name lacks it. */}}
{{- define "etcdbench.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The exporter's name (DaemonSet, Service, ServiceMonitor). */}}
{{- define "etcdbench.exporterName" -}}
{{- printf "%s-exporter" (include "etcdbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels every object carries. */}}
{{- define "etcdbench.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "etcdbench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The exporter's selector labels. */}}
{{- define "etcdbench.exporterSelector" -}}
app.kubernetes.io/name: {{ include "etcdbench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: exporter
{{- end }}

{{/* The image, its tag defaulting to the chart's appVersion. */}}
{{- define "etcdbench.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Whether the exporter serves through a web config file (TLS, basic auth). */}}
{{- define "etcdbench.webEnabled" -}}
{{- if or .Values.web.config .Values.web.existingSecret }}true{{ end }}
{{- end }}

{{/* The Secret holding web-config.yml. */}}
{{- define "etcdbench.webSecret" -}}
{{- default (printf "%s-web-config" (include "etcdbench.fullname" .)) .Values.web.existingSecret }}
{{- end }}

{{/* The seccomp profile's JSON: the value, else the chart's file. */}}
{{- define "etcdbench.seccompProfile" -}}
{{- default (.Files.Get "files/etcdbench-exporter-seccomp.json") .Values.seccomp.profile }}
{{- end }}

{{/* Whether the chart installs the Localhost profile on each node. */}}
{{- define "etcdbench.seccompInstall" -}}
{{- if and (eq .Values.seccomp.type "Localhost") .Values.seccomp.installer.enabled }}true{{ end }}
{{- end }}
