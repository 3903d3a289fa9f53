{{/*
KEDA's Pulsar scaler (kedacore/keda pkg/scalers/pulsar_scaler.go) reads
<adminURL>/admin/v2/persistent/<tenant>/<namespace>/<topic>/stats, the name cut out of the topic by removing
"persistent://", and takes the backlog of the subscription whose name is exactly the trigger's subscription.
So each trigger names the subscription as the manifest does and the topic in full: a short name is expanded as
Settle and Pulsar expand it (orders is persistent://public/default/orders, acme/shop/orders is
persistent://acme/shop/orders).
*/}}
{{- define "settle.kedaTopic" -}}
{{- $t := toString . }}
{{- if hasPrefix "persistent://" $t }}{{ $t }}
{{- else if eq (len (splitList "/" $t)) 3 }}persistent://{{ $t }}
{{- else }}persistent://public/default/{{ $t }}
{{- end }}
{{- end }}

{{/*
The secretEnv entry that holds the manifest's Pulsar token, when the manifest reads it with token: {env: NAME}
and secretEnv.NAME names its Secret: the chart then gives KEDA the same token (a TriggerAuthentication of its own).
Empty otherwise.
*/}}
{{- define "settle.kedaTokenEnv" -}}
{{- $auth := (.Values.manifest.pulsar | default dict).authentication | default dict }}
{{- if kindIs "map" $auth.token }}
{{- $env := toString ($auth.token.env | default "") }}
{{- if and $env (hasKey (.Values.secretEnv | default dict) $env) }}{{ $env }}{{ end }}
{{- end }}
{{- end }}

{{/* The TriggerAuthentication the scaler uses: keda.authenticationRef, else the chart's own for the token. */}}
{{- define "settle.kedaAuthenticationRef" -}}
{{- if .Values.keda.authenticationRef }}{{ .Values.keda.authenticationRef }}
{{- else if include "settle.kedaTokenEnv" . }}{{ include "settle.fullname" . }}-keda
{{- end }}
{{- end }}

{{/* keda.authModes, else bearer when the chart gives KEDA the manifest's token. */}}
{{- define "settle.kedaAuthModes" -}}
{{- if .Values.keda.authModes }}{{ .Values.keda.authModes }}
{{- else if and (not .Values.keda.authenticationRef) (include "settle.kedaTokenEnv" .) }}bearer
{{- end }}
{{- end }}

{{/*
Refuses a scaler that could not read the backlog. Each message names the setting, the value, and what to change.
Included from scaledobject.yaml.
*/}}
{{- /* The admin API the scaler reads the backlog from: keda.adminURL, else the manifest's pulsar.adminUrl, else the
usual in-cluster broker service. */}}
{{- define "settle.kedaAdminURL" -}}
{{- .Values.keda.adminURL | default (.Values.manifest.pulsar.adminUrl | default "http://pulsar-broker.pulsar.svc.cluster.local:8080") -}}
{{- end }}

{{/* The Prometheus trigger's query: keda.prometheus.query, else the largest value of the metric among this release's pods. */}}
{{- define "settle.kedaPrometheusQuery" -}}
{{- .Values.keda.prometheus.query | default (printf "max(%s{namespace=\"%s\",pod=~\"%s-.*\"})" .Values.keda.prometheus.metric .Release.Namespace (include "settle.fullname" .)) -}}
{{- end }}

{{- define "settle.validateKeda" -}}
{{- $v := .Values }}
{{- if eq (int $v.keda.minReplicaCount) 0 }}
{{- if ne (toString $v.keda.activationMsgBacklogThreshold) "0" }}
{{- fail (printf "keda.minReplicaCount is 0 and keda.activationMsgBacklogThreshold is '%v': the deployment would stay at zero replicas while up to that many messages wait, and scale to zero with them unsettled. Scale to zero only on an empty backlog: set keda.activationMsgBacklogThreshold to \"0\" (or minReplicaCount to 1)." $v.keda.activationMsgBacklogThreshold) }}
{{- end }}
{{- if lt (int $v.keda.initialCooldownPeriod) 60 }}
{{- fail (printf "keda.minReplicaCount is 0 and keda.initialCooldownPeriod is %v: KEDA could scale to zero before the first replica has created its subscriptions, and a subscription that does not exist reads as no backlog, so nothing would start it again (kedacore/keda#5417). Set it to 60 or more (300 by default), and check with settle preflight --scale-to-zero." $v.keda.initialCooldownPeriod) }}
{{- end }}
{{- end }}
{{- with $v.keda.prometheus }}
{{- if .enabled }}
{{- if not .serverAddress }}
{{- fail "keda.prometheus.enabled needs keda.prometheus.serverAddress: the Prometheus server KEDA queries for the drain time, e.g. http://prometheus-operated.monitoring.svc:9090." }}
{{- end }}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?$" (toString .threshold)) }}
{{- fail (printf "keda.prometheus.threshold is '%v': seconds per replica, a number such as \"60\"." .threshold) }}
{{- end }}
{{- end }}
{{- end }}
{{- if not (regexMatch "^[0-9]+$" (toString $v.keda.msgBacklogThreshold)) }}
{{- fail (printf "keda.msgBacklogThreshold is '%v': the Pulsar scaler reads it as a whole number of messages (the backlog each replica should have on average). Write one, e.g. \"1000\"." $v.keda.msgBacklogThreshold) }}
{{- end }}
{{- if eq (int64 (toString $v.keda.msgBacklogThreshold)) 0 }}
{{- fail "keda.msgBacklogThreshold is 0: it is the backlog each replica should have on average, and KEDA would scale to maxReplicaCount at the first message. Set it to 1 or more." }}
{{- end }}
{{- if not (regexMatch "^[0-9]+$" (toString $v.keda.activationMsgBacklogThreshold)) }}
{{- fail (printf "keda.activationMsgBacklogThreshold is '%v': the Pulsar scaler reads it as a whole number of messages (the backlog above which it wakes from minReplicaCount 0). Write one, e.g. \"0\"." $v.keda.activationMsgBacklogThreshold) }}
{{- end }}
{{- range $i, $sub := $v.manifest.subscriptions }}
{{- $where := printf "manifest.subscriptions[%d] (%s)" $i (toString $sub.name) }}
{{- if contains "${" (toString $sub.name) }}
{{- fail (printf "keda.enabled needs the subscription's name as Pulsar knows it, but %s takes it from the environment: the scaler would look for a subscription called '%s'. Write the name out." $where $sub.name) }}
{{- end }}
{{- range $t := $sub.topics }}
{{- if contains "${" (toString $t) }}
{{- fail (printf "keda.enabled needs the topic's name, but %s lists '%s', taken from the environment: the scaler would read the stats of a topic of that name. Write the name out." $where $t) }}
{{- end }}
{{- if not (regexMatch "^(persistent://[^/]+/[^/]+/[^/]+|[^/:]+/[^/:]+/[^/:]+|[^/:]+)$" (toString $t)) }}
{{- fail (printf "keda.enabled reads the backlog of persistent topics, but %s lists '%s': write persistent://tenant/namespace/topic (or a short name Settle expands: topic, or tenant/namespace/topic). A non-persistent topic keeps no backlog to scale on." $where $t) }}
{{- end }}
{{- end }}
{{- end }}
{{- $auth := ($v.manifest.pulsar | default dict).authentication | default dict }}
{{- if and $auth (not (include "settle.kedaAuthenticationRef" .)) }}
{{- fail (printf "keda.enabled, and the manifest authenticates to Pulsar (manifest.pulsar.authentication: %s), so the admin API will refuse KEDA's Pulsar scaler without credentials of its own. With token: {env: NAME} and secretEnv.NAME the chart gives KEDA the same token; otherwise create a KEDA TriggerAuthentication (bearerToken for a token, or the scaler's tls, basic or oauth parameters) and set keda.authenticationRef to its name and keda.authModes to its mode." (join ", " (keys $auth | sortAlpha))) }}
{{- end }}
{{- if and (include "settle.kedaAuthModes" .) (not (include "settle.kedaAuthenticationRef" .)) }}
{{- fail (printf "keda.authModes is '%s' but keda.authenticationRef is empty: the scaler would have no credentials to send. Set keda.authenticationRef to the TriggerAuthentication that holds them, or keda.authModes to \"\"." $v.keda.authModes) }}
{{- end }}
{{- end }}
