{{/*
Object names are the release name and the suffix config/default's objects
carry after its eds- prefix, so that a release named eds renders exactly
the names of config/default.
*/}}
{{- define "extendeddaemonset.name" -}}
{{- printf "%s-%s" .root.Release.Name .suffix | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Labels on every object: config/default's part-of label and Helm's own.
*/}}
{{- define "extendeddaemonset.labels" -}}
app.kubernetes.io/part-of: extendeddaemonset
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/*
The label the manager's pods are selected by; the ServiceMonitor's
jobLabel reads it, so the job is "extendeddaemonset" as the alerts expect.
*/}}
{{- define "extendeddaemonset.selectorLabels" -}}
app.kubernetes.io/name: extendeddaemonset
{{- end -}}

{{- define "extendeddaemonset.serviceAccountName" -}}
{{- if .Values.serviceAccount.name -}}
{{- .Values.serviceAccount.name -}}
{{- else -}}
{{- include "extendeddaemonset.name" (dict "root" . "suffix" "controller-manager") -}}
{{- end -}}
{{- end -}}

{{- define "extendeddaemonset.image" -}}
{{- $repo := .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repo .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
The manager's arguments: config/default's first, then one flag per value
that is set. A value left null passes nothing, so the manager's default
applies. Integers go through int64: Helm reads numbers as float64, which
would print 1000000 as 1e+06.
*/}}
{{- define "extendeddaemonset.args" -}}
{{- $m := .Values.manager -}}
{{- $le := .Values.leaderElection -}}
{{- if $le.enabled }}
- --enable-leader-election
{{- end }}
- --metrics-bind-address=:{{ .Values.metrics.port | int64 }}
- --health-probe-bind-address=:8081
{{- with $le.leaseDuration }}
- --leader-election-lease-duration={{ . }}
{{- end }}
{{- with $le.renewDeadline }}
- --leader-election-renew-deadline={{ . }}
{{- end }}
{{- with $le.retryPeriod }}
- --leader-election-retry-period={{ . }}
{{- end }}
{{- if not (kindIs "invalid" $m.kubeAPIQPS) }}
- --kube-api-qps={{ $m.kubeAPIQPS }}
{{- end }}
{{- if not (kindIs "invalid" $m.kubeAPIBurst) }}
- --kube-api-burst={{ $m.kubeAPIBurst | int64 }}
{{- end }}
{{- if not (kindIs "invalid" $m.concurrent) }}
- --concurrent={{ $m.concurrent | int64 }}
{{- end }}
{{- if not (kindIs "invalid" $m.concurrentPodWrites) }}
- --concurrent-pod-writes={{ $m.concurrentPodWrites | int64 }}
{{- end }}
{{- with $m.watchNamespaces }}
- --watch-namespaces={{ join "," . }}
{{- end }}
{{- with $m.allowedWebhookHosts }}
- --allowed-webhook-hosts={{ join "," . }}
{{- end }}
{{- with $m.unresponsiveNodeGrace }}
- --unresponsive-node-grace={{ . }}
{{- end }}
{{- with $m.logLevel }}
- --log-level={{ . }}
{{- end }}
{{- with $m.logEncoding }}
- --log-encoding={{ . }}
{{- end }}
{{- range $m.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}
