package steer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/cli"
)

// revision is one replica set of an ExtendedDaemonSet's history.
type revision struct {
	number int64
	rs     *v1alpha1.ExtendedDaemonSetReplicaSet
}

// history is the target's replica sets, oldest first, as the controller
// orders them.
type history []revision

// replicaSets lists the replica sets the target controls. The label finds
// them; the owner reference keeps out those left by an earlier
// ExtendedDaemonSet of the same name that no garbage collector removed.
func (t *target) replicaSets(ctx context.Context) (history, error) {
	var list v1alpha1.ExtendedDaemonSetReplicaSetList
	if err := t.c.List(ctx, &list, client.InNamespace(t.key.Namespace),
		client.MatchingLabels{v1alpha1.ExtendedDaemonSetNameLabel: t.key.Name}); err != nil {
		if apierrors.IsForbidden(err) || apimeta.IsNoMatchError(err) {
			return nil, cli.Explain(err, "ExtendedDaemonSetReplicaSet", t.key)
		}
		return nil, fmt.Errorf("listing the replica sets of %s: %w", t, err)
	}
	var h history
	for i := range list.Items {
		rs := &list.Items[i]
		if ref := metav1.GetControllerOf(rs); ref == nil || ref.UID != t.eds.UID || rs.DeletionTimestamp != nil {
			continue
		}
		h = append(h, revision{number: revisionOf(rs), rs: rs})
	}
	slices.SortFunc(h, olderFirst)
	return h, nil
}

// revisionOf is the revision the controller numbered rs with, 0 for none.
func revisionOf(rs *v1alpha1.ExtendedDaemonSetReplicaSet) int64 {
	n, err := strconv.ParseInt(rs.Annotations[v1alpha1.RevisionAnnotation], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// olderFirst is the controller's order: by revision, then, for replica
// sets made before revisions were numbered, by creation, then name.
func olderFirst(a, b revision) int {
	if c := cmp.Compare(a.number, b.number); c != 0 {
		return c
	}
	if c := a.rs.CreationTimestamp.Compare(b.rs.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(a.rs.Name, b.rs.Name)
}

func (h history) named(name string) (revision, bool) {
	for _, r := range h {
		if r.rs.Name == name {
			return r, true
		}
	}
	return revision{}, false
}

func (h history) numbered(n int64) (revision, bool) {
	for _, r := range h {
		if r.number == n {
			return r, true
		}
	}
	return revision{}, false
}

// numbers lists the revisions for messages: "1, 2, 3".
func (h history) numbers() string {
	if len(h) == 0 {
		return "none"
	}
	out := make([]string, 0, len(h))
	for _, r := range h {
		out = append(out, r.label())
	}
	return strings.Join(out, ", ")
}

// label is the revision number, or what kubectl prints for none.
func (r revision) label() string {
	if r.number == 0 {
		return "<none>"
	}
	return strconv.FormatInt(r.number, 10)
}

// images is "container=image" for every container of rs's template, init
// containers first as they run first.
func (r revision) images() string {
	spec := r.rs.Spec.Template.Spec
	out := make([]string, 0, len(spec.InitContainers)+len(spec.Containers))
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		out = append(out, c.Name+"="+c.Image)
	}
	return strings.Join(out, ",")
}

// describe names a revision in messages: "revision 2 (agent-x7k2p: agent=agent:v2)".
func (r revision) describe() string {
	return fmt.Sprintf("revision %s (%s: %s)", r.label(), r.rs.Name, r.images())
}
