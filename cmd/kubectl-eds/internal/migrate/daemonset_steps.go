package migrate

import (
	"fmt"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// daemonSetSteps are the steps of README's "Migrating from a DaemonSet":
// the controller leaves a DaemonSet's pods alone while the DaemonSet
// exists, since a DaemonSet recreates any pod deleted, and replaces them
// as old pods once it is deleted with --cascade=orphan.
func (m *migration) daemonSetSteps(name, namespace string) {
	ns := namespaceFlag(namespace)
	m.steps(fmt.Sprintf("To replace DaemonSet %s by the ExtendedDaemonSet, with no node left without its pod:", joinName(namespace, name)),
		fmt.Sprintf("kubectl apply -f <the manifest printed>: while the DaemonSet exists its pods keep their nodes, and "+
			"`kubectl eds status %s%s` says WaitingForOldDaemonSet", name, ns),
		fmt.Sprintf("kubectl delete daemonset %s%s --cascade=orphan: the pods keep running; a DaemonSet that still exists "+
			"recreates any pod deleted, so they can only be replaced once it is gone", name, ns),
		fmt.Sprintf("kubectl eds status %s%s --watch: the DaemonSet's pods are replaced node by node within maxUnavailable; "+
			"it exits 0 once every node runs the new pods", name, ns),
		fmt.Sprintf("kubectl annotate eds %s%s %s-, and remove the annotation from the manifest you keep",
			name, ns, v1alpha1.OldDaemonSetAnnotation),
	)
}

// namespaceFlag is " -n NAMESPACE", or nothing for a manifest without a
// namespace, which goes to the namespace of the kubeconfig's context.
func namespaceFlag(namespace string) string {
	if namespace == "" {
		return ""
	}
	return " -n " + namespace
}
