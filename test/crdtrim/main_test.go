package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const crd = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  names:
    kind: ExtendedDaemonSet
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: Thing is ours.
        properties:
          spec:
            description: |-
              Spec is ours,
              on two lines.
            properties:
              template:
                description: Template is ours.
                properties:
                  metadata:
                    description: Standard object's metadata.
                    properties:
                      labels:
                        additionalProperties:
                          type: string
                        description: Map of string keys and values.
                        type: object
                    type: object
                  spec:
                    description: Specification of the pod.
                    properties:
                      containers:
                        description: |-
                          List of containers.

                          Cannot be updated.
                        items:
                          description: A single application container.
                          properties:
                            description:
                              description: A field named description.
                              default:
                                description: a default value, not a description
                              type: object
                            ports:
                              anyOf:
                              - type: integer
                              - type: string
                              description: A long description folded by the YAML
                                writer onto a second line.
                          type: object
                        type: array
                    required:
                    - containers
                    type: object
                type: object
            type: object
        type: object
`

const trimmed = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  names:
    kind: ExtendedDaemonSet
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: Thing is ours.
        properties:
          spec:
            description: |-
              Spec is ours,
              on two lines.
            properties:
              template:
                description: Template is ours.
                properties:
                  metadata:
                    description: Standard object's metadata.
                    properties:
                      labels:
                        additionalProperties:
                          type: string
                        type: object
                    type: object
                  spec:
                    description: Specification of the pod.
                    properties:
                      containers:
                        items:
                          properties:
                            description:
                              default:
                                description: a default value, not a description
                              type: object
                            ports:
                              anyOf:
                              - type: integer
                              - type: string
                          type: object
                        type: array
                    type: object
                type: object
            type: object
        type: object
`

func TestTrim(t *testing.T) {
	found := map[string]bool{}
	got, err := trim([]byte(crd), found)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != trimmed {
		t.Errorf("trimmed CRD:\n%s\nwant:\n%s", got, trimmed)
	}
	if !found["spec.template.metadata"] || !found["spec.template.spec"] || !found["ExtendedDaemonSet spec.template.spec.required"] {
		t.Errorf("found %v, want both embedded schemas and the template's requirement", found)
	}
	again, err := trim(got, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(got) {
		t.Errorf("a second run changed the CRD:\n%s", again)
	}
}

// A description starting a sequence item cannot be deleted line by line:
// refused, not mangled.
func TestTrimRefusesWhatItCannotDeleteCleanly(t *testing.T) {
	doc := strings.Replace(crd, "                              - type: integer\n",
		"                              - description: first of anyOf\n                                type: integer\n", 1)
	if _, err := trim([]byte(doc), map[string]bool{}); err == nil || !strings.Contains(err.Error(), "not a key of a block mapping") {
		t.Fatalf("want a refusal, got %v", err)
	}
}

func TestRunNeedsEveryEmbeddedSchema(t *testing.T) {
	dir := t.TempDir()
	noTemplate := strings.Replace(crd, "              template:", "              other:", 1)
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(noTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{dir}); err == nil || !strings.Contains(err.Error(), "spec.template.metadata") {
		t.Fatalf("want an error naming the missing schema, got %v", err)
	}

	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{dir}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != trimmed {
		t.Errorf("file not trimmed in place:\n%s", data)
	}
}

// Only the ExtendedDaemonSet's template may leave its containers out: a
// replica set's pods are always its own.
func TestTrimKeepsTheContainersRequiredOfOtherKinds(t *testing.T) {
	other := strings.Replace(crd, "kind: ExtendedDaemonSet\n", "kind: ExtendedDaemonSetReplicaSet\n", 1)
	got, err := trim([]byte(other), map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "                    required:\n                    - containers\n") {
		t.Errorf("the replica set's template lost its required containers:\n%s", got)
	}
}
