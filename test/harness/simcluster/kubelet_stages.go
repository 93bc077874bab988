package simcluster

import (
	"fmt"
	"strings"
	"time"
)

// DefaultImageUpdateDelay is how long the simulated kubelet takes for each
// step of an in-place image update when Options.ImageUpdateDelay is zero.
const DefaultImageUpdateDelay = 500 * time.Millisecond

// kwok's fast stages run a pod once: an image changed on a running pod, or
// a readiness gate turned, would go unseen. These stages play the kubelet's
// part after the pod started, each step after delay:
//
//   - an image in the spec differs from the one its status reports: the
//     containers stop (ContainersReady and Ready False);
//   - stopped that way, they start on the spec's images, counting a
//     restart for each container whose image changed (ContainersReady True);
//   - Ready follows ContainersReady and the readiness gates: True when both
//     are, False when a gate is not.
//
// Pods made unready by hand (ContainersReady False, images unchanged) are
// left as they are.
const kubeletStages = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-image-changed
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '{{imagesChanged}}'
      operator: 'In'
      values: ['true']
    - key: '.status.conditions[]? | select(.type == "ContainersReady") | .status'
      operator: 'In'
      values: ['True']
  delay:
    durationMilliseconds: {{delay}}
  steps:
  - patch:
      subresource: status
      root: status
      template: |
        {{ $now := Now }}
        conditions:
        - lastTransitionTime: {{ $now | Quote }}
          reason: ContainersNotReady
          status: "False"
          type: ContainersReady
        - lastTransitionTime: {{ $now | Quote }}
          reason: ContainersNotReady
          status: "False"
          type: Ready
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-image-started
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '{{imagesChanged}}'
      operator: 'In'
      values: ['true']
    - key: '.status.conditions[]? | select(.type == "ContainersReady") | .status'
      operator: 'NotIn'
      values: ['True']
  delay:
    durationMilliseconds: {{delay}}
  steps:
  - patch:
      subresource: status
      root: status
      template: |
        {{ $now := Now }}
        {{ $root := . }}
        conditions:
        - lastTransitionTime: {{ $now | Quote }}
          status: "True"
          type: ContainersReady
        containerStatuses:
        {{ range $c := .spec.containers }}
        {{ $restarts := 0 }}
        {{ range $s := $root.status.containerStatuses }}
        {{ if eq $s.name $c.name }}
        {{ $restarts = $s.restartCount }}
        {{ if ne $s.image $c.image }}{{ $restarts = add1 $s.restartCount }}{{ end }}
        {{ end }}
        {{ end }}
        - image: {{ $c.image | Quote }}
          name: {{ $c.name | Quote }}
          ready: true
          restartCount: {{ $restarts }}
          started: true
          state:
            running:
              startedAt: {{ $now | Quote }}
        {{ end }}
        initContainerStatuses:
        {{ range $c := .spec.initContainers }}
        - image: {{ $c.image | Quote }}
          name: {{ $c.name | Quote }}
          ready: true
          restartCount: 0
          {{ if eq $c.restartPolicy "Always" }}
          started: true
          state:
            running:
              startedAt: {{ $now | Quote }}
          {{ else }}
          state:
            terminated:
              exitCode: 0
              finishedAt: {{ $now | Quote }}
              reason: Completed
              startedAt: {{ $now | Quote }}
          {{ end }}
        {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready-again
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '{{imagesChanged}}'
      operator: 'In'
      values: ['false']
    - key: '.status.conditions[]? | select(.type == "ContainersReady") | .status'
      operator: 'In'
      values: ['True']
    - key: '.status.conditions[]? | select(.type == "Ready") | .status'
      operator: 'NotIn'
      values: ['True']
    - key: '{{gatesOpen}}'
      operator: 'In'
      values: ['true']
  steps:
  - patch:
      subresource: status
      root: status
      template: |
        conditions:
        - lastTransitionTime: {{ Now | Quote }}
          status: "True"
          type: Ready
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-gate-closed
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.status.conditions[]? | select(.type == "Ready") | .status'
      operator: 'In'
      values: ['True']
    - key: '{{gatesOpen}}'
      operator: 'In'
      values: ['false']
  delay:
    durationMilliseconds: {{delay}}
  steps:
  - patch:
      subresource: status
      root: status
      template: |
        conditions:
        - lastTransitionTime: {{ Now | Quote }}
          reason: ReadinessGatesNotReady
          status: "False"
          type: Ready
`

// The selectors' jq: whether any container's spec image differs from its
// status, and whether every readiness gate's condition is True.
const (
	imagesChangedQuery = `([.spec.containers[]?, .spec.initContainers[]? | .name + "=" + .image] | sort) != ` +
		`([.status.containerStatuses[]?, .status.initContainerStatuses[]? | .name + "=" + .image] | sort)`
	gatesOpenQuery = `([.spec.readinessGates[]?.conditionType] - ` +
		`[.status.conditions[]? | select(.status == "True") | .type]) | length == 0`
)

// kubeletStagesYAML returns the stages with their steps delay apart.
func kubeletStagesYAML(delay time.Duration) string {
	if delay <= 0 {
		delay = DefaultImageUpdateDelay
	}
	return strings.NewReplacer(
		"{{imagesChanged}}", strings.ReplaceAll(imagesChangedQuery, "'", "''"),
		"{{gatesOpen}}", gatesOpenQuery,
		"{{delay}}", fmt.Sprint(delay.Milliseconds()),
	).Replace(kubeletStages)
}
