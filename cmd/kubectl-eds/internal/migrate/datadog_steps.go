package migrate

import (
	"fmt"
	"strings"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// datadogSteps hand the original's pods over to this controller. Once the
// original ExtendedDaemonSet and its replica sets are deleted with
// --cascade=orphan, its pods belong to no controller, and the
// old-daemonset annotation makes this one replace those its selector
// matches as old pods (no DaemonSet of that name exists), instead of
// putting a second pod beside them. The orphaning comes first: a pod that
// still has a controller is not an old pod, and would get a second pod
// beside it.
func (m *migration) datadogSteps(name, namespace string, containers []string, selectsOldPods bool) {
	ns := namespaceFlag(namespace)
	var steps []string
	if !m.settingsOf[joinName(namespace, name)] {
		steps = append(steps, fmt.Sprintf("migrate its ExtendedDaemonsetSettings too, if it has any: "+
			"`kubectl get extendeddaemonsetsettings.datadoghq.com%s -o yaml | kubectl eds migrate -f -`", ns))
	}
	if len(containers) > 0 {
		where := ""
		if namespace == "" {
			where = " (NAMESPACE: the namespace it runs in)"
		}
		steps = append(steps, "copy the node annotations that override its containers' resources to this controller's key, "+
			"the only one it reads"+where+":\n"+nodeAnnotationCopy(name, namespace, containers))
	}
	if !selectsOldPods {
		steps = append(steps,
			fmt.Sprintf("kubectl delete extendeddaemonsets.datadoghq.com %s%s: its pods go, and every node is without them until the next step", name, ns),
			"kubectl apply -f <the manifest printed>",
			fmt.Sprintf("kubectl eds status %s%s --watch: it exits 0 once every node runs the new pods", name, ns))
		m.steps(fmt.Sprintf("To replace ExtendedDaemonSet %s of the original controller by this one:", joinName(namespace, name)), steps...)
		return
	}
	steps = append(steps,
		fmt.Sprintf("kubectl delete extendeddaemonsets.datadoghq.com %s%s --cascade=orphan", name, ns),
		fmt.Sprintf("kubectl delete extendeddaemonsetreplicasets.datadoghq.com%s -l %sname=%s --cascade=orphan: "+
			"its pods keep running, owned by no controller", ns, datadogAnnotationPrefix, name),
		fmt.Sprintf("kubectl apply -f <the manifest printed>: with %s, the pods its selector matches are replaced "+
			"node by node within maxUnavailable, never doubled", v1alpha1.OldDaemonSetAnnotation),
		fmt.Sprintf("kubectl eds status %s%s --watch: it exits 0 once every node runs the new pods", name, ns),
		fmt.Sprintf("kubectl annotate eds %s%s %s-, and remove the annotation from the manifest you keep",
			name, ns, v1alpha1.OldDaemonSetAnnotation),
	)
	m.steps(fmt.Sprintf("To hand ExtendedDaemonSet %s over from the original controller to this one, node by node:", joinName(namespace, name)), steps...)
}

// nodeAnnotationCopy is a shell loop that copies, on every node, the
// original's resources annotation of each container to ours.
func nodeAnnotationCopy(name, namespace string, containers []string) string {
	if namespace == "" {
		// The annotation names the namespace the object lives in.
		namespace = "NAMESPACE"
	}
	// kubectl's JSONPath takes a dot inside a key escaped.
	escape := func(s string) string { return strings.ReplaceAll(s, ".", `\.`) }
	from := escape(datadogNodeResourcesPrefix + namespace + "." + name + ".")
	to := v1alpha1.NodeResourcesAnnotationPrefix + namespace + "." + name + "."
	return fmt.Sprintf(`for node in $(kubectl get nodes -o name); do for c in %s; do `+
		`v=$(kubectl get "$node" -o jsonpath="{.metadata.annotations.%s$c}"); `+
		`[ -z "$v" ] || kubectl annotate --overwrite "$node" "%s$c=$v"; done; done`,
		strings.Join(containers, " "), from, to)
}
