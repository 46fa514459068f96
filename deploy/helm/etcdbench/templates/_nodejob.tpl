{{/* One Job on one control-plane node, as a Helm test hook: the check's
(deploy/kubernetes/job.yaml's, held equal by deploy/helm's
TestChartMatchesManifests) or the capacity measurement's, which also
saves its result in a hostPath directory (results) for the exporter.
Parameters: root, node, i (its index), weight (its hook weight),
component (check, capacity), values (.Values.check or .Values.capacity),
args, results ("": none). */}}
{{- define "etcdbench.nodeJob" -}}
{{- $root := .root }}{{ $node := .node }}{{ $i := .i }}{{ $weight := .weight }}{{ $c := .component }}{{ $v := .values }}{{ $args := .args }}{{ $results := .results }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ printf "%s-%s-%d" (include "etcdbench.fullname" $root) $c $i | trunc 52 | trimSuffix "-" }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "etcdbench.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $c }}
  annotations:
    etcdbench/node: {{ $node }}
    helm.sh/hook: test
    helm.sh/hook-weight: {{ $weight | quote }}
    # The last run's Job and log stay until the next `helm test` (or the TTL).
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  completions: 1
  parallelism: 1
  # Never retried: a second pod would load the node's disk a second time,
  # and a FAIL verdict (exit code 1) is an answer, not an accident.
  backoffLimit: 0
  activeDeadlineSeconds: {{ $v.activeDeadlineSeconds }}
  ttlSecondsAfterFinished: {{ $v.ttlSecondsAfterFinished }}
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes:
        containerName: etcdbench
        operator: In
        values: [1, 2, 3]
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ include "etcdbench.name" $root }}
        app.kubernetes.io/instance: {{ $root.Release.Name }}
        app.kubernetes.io/component: {{ $c }}
      annotations:
        etcdbench/node: {{ $node }}
    spec:
      restartPolicy: Never
      {{- if $results }}
      # The node's hostname in the result (environment.hostname), which
      # the exporter compares with its own.
      hostNetwork: true
      dnsPolicy: ClusterFirstWithHostNet
      {{- end }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: 30
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: node-role.kubernetes.io/control-plane
                operator: Exists
              matchFields:
              - key: metadata.name
                operator: In
                values: [{{ $node }}]
      tolerations:
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/master
        operator: Exists
        effect: NoSchedule
      securityContext:
        runAsUser: 0
        runAsGroup: 0
        runAsNonRoot: false
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: etcdbench
        image: {{ include "etcdbench.image" $root }}
        imagePullPolicy: {{ $root.Values.image.pullPolicy }}
        args:
        {{- toYaml $args | nindent 8 }}
        {{- with $v.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        securityContext:
          privileged: false
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities:
            drop: [ALL]
        resources:
          {{- toYaml $v.resources | nindent 10 }}
        volumeMounts:
        - name: scratch
          mountPath: /scratch
        - name: tmp
          mountPath: /tmp
        {{- if $results }}
        - name: results
          mountPath: /results
        {{- end }}
      volumes:
      - name: scratch
        hostPath:
          path: {{ $v.hostPath }}
          type: DirectoryOrCreate
      - name: tmp
        emptyDir:
          sizeLimit: 16Mi
      {{- if $results }}
      - name: results
        hostPath:
          path: {{ $results }}
          type: DirectoryOrCreate
      {{- end }}
{{- end }}
