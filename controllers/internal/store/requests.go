package store

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Requests is a reconcile request for each of items, the objects of a
// list, which a watch maps an event to.
func Requests[T any, P interface {
	*T
	client.Object
}](items []T) []reconcile.Request {
	reqs := make([]reconcile.Request, len(items))
	for i := range items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(P(&items[i]))}
	}
	return reqs
}
