package overrides

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// CheckNodeAnnotations returns the malformed resource override annotations
// of one ExtendedDaemonSet across nodes, one error per node, nil when every
// one parses. They are skipped at pod creation; this tells the owner.
func CheckNodeAnnotations(namespace, eds string, nodes []corev1.Node) error {
	var problems []string
	for i := range nodes {
		if _, err := ForNode(namespace, eds, &nodes[i], nil); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) == 0 {
		return nil
	}
	// One line, so that it reads well as a condition message.
	return errors.New(strings.Join(problems, "; "))
}

// AnnotatedExtendedDaemonSets names the ExtendedDaemonSets a node's resource
// override annotations refer to. The key is <namespace>.<eds>.<container>:
// namespaces and container names are DNS labels without dots, so the name
// in between may hold dots of its own.
func AnnotatedExtendedDaemonSets(node *corev1.Node) []types.NamespacedName {
	seen := map[types.NamespacedName]bool{}
	var out []types.NamespacedName
	for key := range node.Annotations {
		rest, ok := strings.CutPrefix(key, v1alpha1.NodeResourcesAnnotationPrefix)
		if !ok {
			continue
		}
		namespace, rest, ok := strings.Cut(rest, ".")
		dot := strings.LastIndex(rest, ".")
		if !ok || dot <= 0 {
			continue
		}
		ref := types.NamespacedName{Namespace: namespace, Name: rest[:dot]}
		if !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
	}
	return out
}
