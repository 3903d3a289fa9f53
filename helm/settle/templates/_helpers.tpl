{{/*
Names and labels. Every object takes its labels from here.
*/}}
{{- define "settle.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "settle.fullname" -}}
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

{{- define "settle.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "settle.selectorLabels" -}}
app.kubernetes.io/name: {{ include "settle.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "settle.labels" -}}
helm.sh/chart: {{ include "settle.chart" . }}
{{ include "settle.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: runtime
app.kubernetes.io/part-of: settle
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "settle.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "settle.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The runtime image: repository:tag, or repository:tag@digest when a digest pins it (the tag then only documents).
Without a tag, the chart's appVersion, with "-examples" while image.examples is on: the image the Dockerfile's
examples target builds, which carries the example handlers that the default manifest runs.
*/}}
{{- define "settle.image" -}}
{{- $tag := .Values.image.tag -}}
{{- if not $tag -}}
{{- $tag = ternary (printf "%s-examples" .Chart.AppVersion) .Chart.AppVersion .Values.image.examples -}}
{{- end -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end }}

{{/*
The runtime's fixed paths.
*/}}
{{- define "settle.manifestPath" -}}/etc/settle/manifest.yaml{{- end }}
{{- define "settle.handlersDir" -}}/opt/settle/handlers{{- end }}

{{/*
The manifest's shutdown.grace in whole seconds, rounded up (the runtime's default: 20 s). Written as 500ms, 30s,
5m or 1h; the ISO-8601 form the runtime also reads is refused here, to keep the chart's arithmetic simple.
*/}}
{{- define "settle.drainGraceSeconds" -}}
{{- $shutdown := .Values.manifest.shutdown | default dict }}
{{- $grace := toString ($shutdown.grace | default "20s") }}
{{- if not (regexMatch "^[0-9]+(ms|s|m|h)$" $grace) }}
{{- fail (printf "manifest.shutdown.grace is '%s': write it as a number with ms, s, m or h (such as 30s) for this chart, which derives terminationGracePeriodSeconds from it" $grace) }}
{{- end }}
{{- $amount := regexFind "^[0-9]+" $grace | int }}
{{- $unit := regexFind "(ms|s|m|h)$" $grace }}
{{- if eq $unit "ms" }}{{ div (add $amount 999) 1000 }}
{{- else if eq $unit "s" }}{{ $amount }}
{{- else if eq $unit "m" }}{{ mul $amount 60 }}
{{- else }}{{ mul $amount 3600 }}
{{- end }}
{{- end }}

{{/*
Seconds Kubernetes waits between SIGTERM and SIGKILL: the value given, or the drain grace plus 10 s (after the
drain come the handlers' close, the acknowledgements' flush and the JVM's exit).
*/}}
{{- define "settle.terminationGracePeriodSeconds" -}}
{{- $grace := include "settle.drainGraceSeconds" . | int }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}{{ add $grace 10 }}
{{- else }}{{ int .Values.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/*
The rollout strategy: the value given, or Recreate when any subscription is Exclusive or Failover (a new pod
would wait, unready, for the old one's consumer, and a RollingUpdate would wait for the new pod: nothing would
move), RollingUpdate otherwise.
*/}}
{{- define "settle.strategy" -}}
{{- if .Values.strategy }}
{{- toYaml .Values.strategy }}
{{- else }}
{{- $single := false }}
{{- range (.Values.manifest.subscriptions | default list) }}
{{- if has (.type | default "Shared") (list "Exclusive" "Failover") }}{{ $single = true }}{{ end }}
{{- end }}
{{- if $single }}type: Recreate{{ else }}type: RollingUpdate{{ end }}
{{- end }}
{{- end }}

{{/* The manifest's http.port (default 8080): the container port, the probes and the Service use it. */}}
{{- define "settle.httpPort" -}}
{{- $http := .Values.manifest.http | default dict }}
{{- $port := $http.port | default 8080 }}
{{- if not (regexMatch "^[0-9]+$" (toString $port)) }}
{{- fail (printf "manifest.http.port must be a plain number for this chart (the container port, the probes and the Service follow it), was '%v': write the port itself, not a ${VAR} reference" $port) }}
{{- end }}
{{- int $port }}
{{- end }}

{{/* Where a jars entry ends up in the container: its own path, or a download under the handlers folder. */}}
{{- define "settle.jarFile" -}}
{{- if .path }}{{ .path }}{{ else }}{{ include "settle.handlersDir" . }}/{{ .name }}.jar{{ end }}
{{- end }}

{{- define "settle.hasDownloads" -}}
{{- range .Values.jars }}{{ if or .url .package }}true{{ end }}{{ end }}
{{- end }}

{{/*
The pod's environment: JVM options, secretEnv (each a secretKeyRef), then env as given.
Shared by the runtime container and the package init containers (whose authParams may use $(VAR)).
*/}}
{{- define "settle.env" -}}
{{- range $name, $ref := .Values.secretEnv }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ required (printf "secretEnv.%s.secretName is required: the name of the Secret holding %s" $name $name) $ref.secretName }}
      key: {{ required (printf "secretEnv.%s.key is required: the key inside Secret %s" $name $ref.secretName) $ref.key }}
{{- end }}
{{- with .Values.env }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Refuses combinations that cannot work. Each message names the setting, the value, and what to change.
Included once, from deployment.yaml.
*/}}
{{- define "settle.validate" -}}
{{- $v := .Values }}
{{- $grace := include "settle.drainGraceSeconds" . | int }}

{{- /* Grace period. */}}
{{- if and (not (kindIs "invalid" $v.terminationGracePeriodSeconds)) (lt (int $v.terminationGracePeriodSeconds) (add $grace 10)) }}
{{- fail (printf "terminationGracePeriodSeconds is %v: it must be at least the runtime's %d s drain grace (manifest.shutdown.grace) plus 10 s for the handlers' close and the acknowledgements' flush, or Kubernetes kills the pod mid-drain. Set it to %d or more, or leave it out to have it derived." $v.terminationGracePeriodSeconds $grace (add $grace 10)) }}
{{- end }}

{{- /* Scaling. */}}
{{- if and $v.keda.enabled $v.autoscaling.enabled }}
{{- fail "keda.enabled and autoscaling.enabled are both true: KEDA creates its own HorizontalPodAutoscaler and the two would fight over the replica count. Set autoscaling.enabled=false to scale on the subscription backlog, or keda.enabled=false to scale on CPU." }}
{{- end }}
{{- $admin := ($v.manifest | default dict).admin }}
{{- if and $admin (ne (include "settle.codeStore" $) "pulsar") (or (gt (int $v.replicaCount) 1) $v.autoscaling.enabled $v.keda.enabled) }}
{{- fail "manifest.admin turns on the admin API, which takes handler JARs, but more than one pod may run (replicaCount above 1, autoscaling or keda), and the code is kept on each pod's disk (manifest.admin.codeStore: disk, the default): an upload would reach one pod only, so the pods would run different code. Keep the code in Pulsar, where every pod reads it (manifest.admin.codeStore: pulsar with codeNamespace, and manifest.pulsar.adminUrl), or keep one pod: replicaCount: 1 with autoscaling and keda off." }}
{{- end }}
{{- if and $v.metrics.podMonitor.enabled $v.metrics.serviceMonitor.enabled }}
{{- fail "metrics.podMonitor.enabled and metrics.serviceMonitor.enabled are both true: Prometheus would scrape every pod twice and double every series. Enable only one of them." }}
{{- end }}
{{- if $v.podDisruptionBudget.enabled }}
{{- $min := $v.podDisruptionBudget.minAvailable }}
{{- $max := $v.podDisruptionBudget.maxUnavailable }}
{{- if and (not (kindIs "invalid" $min)) (not (kindIs "invalid" $max)) }}
{{- fail "podDisruptionBudget sets both minAvailable and maxUnavailable: Kubernetes accepts only one. Set the other to null." }}
{{- end }}
{{- if and (kindIs "invalid" $min) (kindIs "invalid" $max) }}
{{- fail "podDisruptionBudget.enabled is true but neither minAvailable nor maxUnavailable is set: set one of them (maxUnavailable: 1 is the default), or podDisruptionBudget.enabled=false." }}
{{- end }}
{{- end }}

{{- /* JAR sources. */}}
{{- if not $v.jars }}
{{- fail "jars is empty: the runtime needs at least one handler JAR. Add an entry with a name and one of path (a JAR in the image), url with sha256 (a download), or package (function://tenant/namespace/name@version)." }}
{{- end }}
{{- $provided := list }}
{{- $folders := list }}
{{- $names := dict }}
{{- range $i, $jar := $v.jars }}
{{- $where := printf "jars[%d] (%s)" $i (toString $jar.name) }}
{{- if hasKey $names (toString $jar.name) }}
{{- fail (printf "jars[%d]: the name '%s' is used twice; names must be unique, since a download lands in %s/<name>.jar. Rename one of them." $i $jar.name (include "settle.handlersDir" $)) }}
{{- end }}
{{- $_ := set $names (toString $jar.name) true }}
{{- $sources := list }}
{{- if $jar.path }}{{ $sources = append $sources "path" }}{{ end }}
{{- if $jar.url }}{{ $sources = append $sources "url" }}{{ end }}
{{- if $jar.package }}{{ $sources = append $sources "package" }}{{ end }}
{{- if eq (len $sources) 0 }}
{{- fail (printf "%s has no source: set exactly one of path (a JAR in the image), url (with sha256) or package (function://tenant/namespace/name@version)." $where) }}
{{- end }}
{{- if gt (len $sources) 1 }}
{{- fail (printf "%s sets %s: a JAR comes from exactly one source. Keep one of them, or split them into separate entries with their own names." $where (join " and " $sources)) }}
{{- end }}
{{- if and $jar.sha256 (not $jar.url) }}
{{- fail (printf "%s sets sha256, which is checked only for url sources: remove jars[%d].sha256." $where $i) }}
{{- end }}
{{- if and $jar.authorization (not $jar.url) }}
{{- fail (printf "%s sets authorization, which is used only for url sources: remove jars[%d].authorization." $where $i) }}
{{- end }}
{{- if $jar.path }}
{{- if not (isAbs $jar.path) }}
{{- fail (printf "%s path is '%s': it must be absolute (the manifest lives in a ConfigMap at %s, so a relative path points there). Write the JAR's full path in the image." $where $jar.path (include "settle.manifestPath" $)) }}
{{- end }}
{{- if hasPrefix (printf "%s/" (include "settle.handlersDir" $)) $jar.path }}
{{- fail (printf "%s path is '%s', under %s, where the download emptyDir is mounted and hides the image's files. Put in-image JARs elsewhere, e.g. /opt/settle/lib/." $where $jar.path (include "settle.handlersDir" $)) }}
{{- end }}
{{- $folders = append $folders (printf "%s/" (trimSuffix "/" $jar.path)) }}
{{- end }}
{{- if $jar.url }}
{{- if not (regexMatch "^https?://" $jar.url) }}
{{- fail (printf "%s url is '%s': only http:// and https:// URLs are downloaded. Use one of those, or a package source for Pulsar package management." $where $jar.url) }}
{{- end }}
{{- if not $jar.sha256 }}
{{- fail (printf "%s downloads %s without a checksum: set jars[%d].sha256 to the JAR's SHA-256 (64 hex digits, as printed by sha256sum), so a changed or corrupted download is refused." $where $jar.url $i) }}
{{- end }}
{{- if not (regexMatch "^[0-9a-fA-F]{64}$" (toString $jar.sha256)) }}
{{- fail (printf "%s sha256 is '%s': it must be 64 hex digits, as printed by sha256sum." $where $jar.sha256) }}
{{- end }}
{{- end }}
{{- if $jar.package }}
{{- if not (regexMatch "^(function|sink|source)://[^/@]+/[^/@]+/[^/@]+@[^/@]+$" $jar.package) }}
{{- fail (printf "%s package is '%s': it must look like function://tenant/namespace/name@version (the version is required, so every pod runs the same JAR)." $where $jar.package) }}
{{- end }}
{{- if not $v.pulsarPackages.adminUrl }}
{{- fail (printf "%s is a Pulsar package, but pulsarPackages.adminUrl is empty: set it to the Pulsar admin (web service) URL, e.g. http://pulsar-broker.pulsar.svc.cluster.local:8080." $where) }}
{{- end }}
{{- end }}
{{- $provided = append $provided (include "settle.jarFile" $jar) }}
{{- end }}

{{- /* Every subscription's jar is provided by a jars entry. */}}
{{- $subscriptions := $v.manifest.subscriptions | default list }}
{{- if not $subscriptions }}
{{- fail "manifest.subscriptions is empty: the runtime needs at least one subscription to run. Add one (name, topics, handler, jar)." }}
{{- end }}
{{- $maxReplicas := int $v.replicaCount }}
{{- if $v.autoscaling.enabled }}{{ $maxReplicas = int $v.autoscaling.maxReplicas }}{{ end }}
{{- if $v.keda.enabled }}{{ $maxReplicas = int $v.keda.maxReplicaCount }}{{ end }}
{{- range $i, $sub := $subscriptions }}
{{- $where := printf "manifest.subscriptions[%d] (%s)" $i (toString $sub.name) }}
{{- if not $sub.jar }}
{{- fail (printf "%s has no jar: set it to one of the JARs the jars entries provide: %s." $where (join ", " $provided)) }}
{{- end }}
{{- $jarPath := toString $sub.jar }}
{{- $found := has $jarPath $provided }}
{{- range $folders }}{{ if hasPrefix . $jarPath }}{{ $found = true }}{{ end }}{{ end }}
{{- if not $found }}
{{- fail (printf "%s jar is '%s', which no entry of jars provides: point it at one of %s, or add a jars entry (path, url with sha256, or package) for it." $where $jarPath (join ", " $provided)) }}
{{- end }}
{{- $type := toString (default "Shared" $sub.type) }}
{{- if and (eq $type "Exclusive") (gt $maxReplicas 1) }}
{{- fail (printf "%s is Exclusive, which admits one consumer, but up to %d replicas would run: the others could not subscribe. Use Failover (the others stand by), Shared or Key_Shared, or run one replica." $where $maxReplicas) }}
{{- end }}
{{- if $v.keda.enabled }}
{{- if not (has $type (list "Shared" "Key_Shared")) }}
{{- fail (printf "keda.enabled scales on the backlog of %s, which is %s: only one consumer receives on Exclusive and Failover, so added replicas would sit idle. Use Shared or Key_Shared, or set keda.enabled=false." $where $type) }}
{{- end }}
{{- if $sub.topicsPattern }}
{{- fail (printf "keda.enabled needs concrete topics, but %s uses topicsPattern: the Pulsar scaler reads one topic's subscription backlog. List the topics under topics, or set keda.enabled=false." $where) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Secrets never as plain values. */}}
{{- range $i, $e := $v.env }}
{{- if and (hasKey $e "value") (regexMatch "(?i)(TOKEN|PASSWORD|PASSWD|SECRET|CREDENTIAL|PRIVATE_?KEY)" (toString $e.name)) }}
{{- fail (printf "env[%d] %s has a plain value, and its name says it is a secret: put it in a Kubernetes Secret and reference it with secretEnv.%s (secretName, key), so it never sits in values or in the pod spec." $i $e.name $e.name) }}
{{- end }}
{{- end }}
{{- with $v.pulsarPackages.authParams }}
{{- if regexMatch "token:" . }}
{{- if not (regexMatch "token:(\\$\\(|file:)" .) }}
{{- fail "pulsarPackages.authParams holds a literal token: put the token in a Secret, add it to secretEnv (e.g. PULSAR_TOKEN: {secretName: pulsar-token, key: token}) and write authParams: \"token:$(PULSAR_TOKEN)\"." }}
{{- end }}
{{- end }}
{{- end }}
{{- include "settle.validateManifestSecrets" . }}
{{- end }}

{{/*
The manifest goes into a ConfigMap, which is not a Secret: its authentication must reference secrets
(token: {env: NAME} filled from secretEnv, or a file mounted with secretMounts), never hold them.
*/}}
{{- define "settle.validateManifestSecrets" -}}
{{- $pulsar := .Values.manifest.pulsar | default dict }}
{{- $auth := $pulsar.authentication | default dict }}
{{- if hasKey $auth "token" }}
{{- $token := $auth.token }}
{{- if not (kindIs "map" $token) }}
{{- fail "manifest.pulsar.authentication.token holds the token itself, and the manifest goes into a ConfigMap: put the token in a Kubernetes Secret, add it to secretEnv (e.g. PULSAR_TOKEN: {secretName: pulsar-token, key: token}) and write token: {env: PULSAR_TOKEN}." }}
{{- end }}
{{- with $token.env }}
{{- $names := keys $.Values.secretEnv }}
{{- range $.Values.env }}{{ $names = append $names (toString .name) }}{{ end }}
{{- if and (not (has (toString .) $names)) (not $.Values.envFrom) }}
{{- fail (printf "manifest.pulsar.authentication.token.env is %s, but the pod's environment does not set it: add secretEnv.%s: {secretName: <your Secret>, key: <its key>}." . .) }}
{{- end }}
{{- end }}
{{- end }}
{{- if kindIs "map" $auth.oauth2 }}
{{- $url := toString ($auth.oauth2.credentialsUrl | default "") }}
{{- if hasPrefix "data:" $url }}
{{- fail "manifest.pulsar.authentication.oauth2.credentialsUrl is a data: URL, which holds the client secret, and the manifest goes into a ConfigMap: put the credentials JSON in a Kubernetes Secret, mount it with secretMounts (e.g. at /var/run/secrets/settle/oauth2) and write credentialsUrl: file:///var/run/secrets/settle/oauth2/credentials.json." }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Where the runtime keeps handler generations: "disk" (the default, one pod) or "pulsar" (every pod reads them).
*/}}
{{- define "settle.codeStore" -}}
{{- ((.Values.manifest | default dict).admin | default dict).codeStore | default "disk" -}}
{{- end }}

{{/*
The checksum that rolls the pods when the manifest changes. With the code kept in Pulsar, a subscription's code
(jar, handler, config) is left out: the runtimes reload the mounted manifest and swap new code with their consumers
open, so a change of code alone does not restart a pod; every other change does.
*/}}
{{- define "settle.manifestChecksum" -}}
{{- if eq (include "settle.codeStore" .) "pulsar" -}}
{{- $manifest := deepCopy (.Values.manifest | default dict) -}}
{{- $subscriptions := list -}}
{{- range ($manifest.subscriptions | default list) -}}
{{- $subscriptions = append $subscriptions (omit . "jar" "handler" "config") -}}
{{- end -}}
{{- $_ := set $manifest "subscriptions" $subscriptions -}}
{{- toYaml $manifest | sha256sum -}}
{{- else -}}
{{- include (print $.Template.BasePath "/configmap.yaml") . | sha256sum -}}
{{- end -}}
{{- end }}
