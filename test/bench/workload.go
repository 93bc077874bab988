package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workload is a node agent run by one of the controllers compared.
type workload interface {
	// create creates the agent in namespace, running image version,
	// rolled out as sc says.
	create(ctx context.Context, namespace string, sc scenario, version string) error
	// setImage changes the agent's image, nothing else.
	setImage(ctx context.Context, version string) error
	// rollout reports how far the latest template has got.
	rollout(ctx context.Context) (rolloutState, error)
	// deleteAll deletes the agent and every object the controller made
	// for it, pods excepted.
	deleteAll(ctx context.Context) error
}

// rolloutState is where a rollout stands.
type rolloutState struct {
	// done: every desired pod runs the latest template and is available,
	// and the controller says so in its status.
	done bool
	// summary changes whenever the rollout makes progress; it also tells a
	// stuck one in errors.
	summary string
}

// agentLabels select the agent's pods.
var agentLabels = map[string]string{"app": "agent"}

// maxUnavailable is what every rolling update of the benchmark allows, but
// the surge scenario's, which allows maxSurge and no unavailable pod.
var (
	maxUnavailable = intstr.FromString("10%")
	maxSurge       = intstr.FromString("10%")
)

// agentTemplate is a node agent's pod template; version is its image tag.
func agentTemplate(version string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: agentLabels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "agent", Image: agentImage(version),
		}}},
	}
}

func agentImage(version string) string { return "registry.example/agent:" + version }

// setContainerImage sets the image of the first container of obj's
// template, which template returns.
func setContainerImage(ctx context.Context, c client.Client, obj client.Object, template func() *corev1.PodTemplateSpec, version string) error {
	return updateOnConflict(ctx, c, obj, func() error {
		template().Spec.Containers[0].Image = agentImage(version)
		return nil
	})
}

// updateOnConflict reads obj, changes it with change and updates it,
// reading it afresh when the controller's own status writes make the
// update conflict.
func updateOnConflict(ctx context.Context, c client.Client, obj client.Object, change func() error) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		if err := change(); err != nil {
			return err
		}
		return c.Update(ctx, obj)
	})
	if err != nil {
		return fmt.Errorf("updating %s: %w", obj.GetName(), err)
	}
	return nil
}
