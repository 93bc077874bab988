package inspect

import (
	"encoding/json"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// column is a table column; wide ones show with -o wide only.
func column(name string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string"}
}

func wideColumn(name string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Priority: 1}
}

// row is obj's row; the table printer reads the namespace column of -A
// from obj.
func row(obj runtime.Object, cells ...any) metav1.TableRow {
	return metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}}
}

// age is how long ago t was, as kubectl writes it.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// orNone is s, or "<none>" as kubectl writes an empty cell.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// images are the images of a pod template's containers, comma separated.
func images(spec corev1.PodSpec) string {
	var out []string
	for _, c := range spec.Containers {
		out = append(out, c.Image)
	}
	return strings.Join(out, ",")
}

func containerNames(spec corev1.PodSpec) string {
	var out []string
	for _, c := range spec.Containers {
		out = append(out, c.Name)
	}
	return strings.Join(out, ",")
}

// jsonCell writes v as the CRD printer columns write a map: in JSON.
func jsonCell(v map[string]string) string {
	if len(v) == 0 {
		return "<none>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "<invalid>"
	}
	return string(b)
}
