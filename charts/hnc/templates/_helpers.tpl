{{/*
The labels Helm's own tooling expects on every object the chart renders. They are added to
metadata.labels only, never to selectors or to the pods' labels, so the rendered objects are
otherwise those of dist/install.yaml (deploy/chart.test.ts strips exactly these to compare).
*/}}
{{- define "hnc.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The manager pods' selector (as in deploy/manager/deployment.yaml). */}}
{{- define "hnc.selectorLabels" -}}
app.kubernetes.io/name: hnc-ts
control-plane: controller-manager
{{- end }}

{{/*
HNC's own namespace is the release namespace. Refuses "default": HNC never manages its own
namespace, and the workloads of "default" would silently be left out of every hierarchy.
*/}}
{{- define "hnc.namespace" -}}
{{- if eq .Release.Namespace "default" -}}
{{- fail "hnc: install HNC into a namespace of its own, not \"default\" (HNC never manages its own namespace): helm install hnc charts/hnc --namespace hnc-system --create-namespace" -}}
{{- end -}}
{{- .Release.Namespace -}}
{{- end }}

{{- define "hnc.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end }}
