package outcome

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner names the controller in managed fields.
const FieldOwner = "extendeddaemonset-controller"

// StaleReadRetry is how soon a reconcile whose status write lost to a
// newer version looks again, should no event of that version wake it.
const StaleReadRetry = 200 * time.Millisecond

// PatchStatus writes after's status, computed from before, in one request,
// and only if before is still the version the API server holds: the patch
// carries before's resourceVersion, so a pass that read a stale version
// gets a Conflict instead of overwriting a newer status.
func PatchStatus(ctx context.Context, c client.Client, before, after client.Object) error {
	return c.Status().Patch(ctx, after, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner))
}
