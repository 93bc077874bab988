package chaos

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/canary"
	"github.com/extendeddaemonset/extendeddaemonset/controllers/placement"
	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/managerproc"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/rbacinstall"
	"github.com/extendeddaemonset/extendeddaemonset/test/invariants"
)

const (
	// leaseName is cmd/manager's leader election ID.
	leaseName = "extendeddaemonset.io"
	// leaderTimeout bounds the wait for a leader: a lease expiry plus a
	// busy machine.
	leaderTimeout = 2 * time.Minute
	// cleanupTimeout bounds the deletion of a scenario's pods.
	cleanupTimeout = 5 * time.Minute
	pollInterval   = time.Second
	// reactionTime is how long after an agent fails on its own the
	// manager is held to know it (invariants.Options.ReactionTime).
	reactionTime = 3 * time.Second
)

// fastLease lets another manager take over within seconds of a kill: the
// lease expires 8s after a candidate last saw it renewed, and candidates
// look every 1 to 2.2s (the retry period with client-go's jitter), so a
// takeover takes at most about 12s. The defaults (35s, 5s) would make
// every kill cost most of a minute of nothing.
var fastLease = []string{
	"--leader-election-lease-duration=8s", "--leader-election-renew-deadline=6s", "--leader-election-retry-period=1s",
}

// scenario is one chaos test on the shared cluster, in a namespace of its
// own, with the invariant monitor watching it from start to end.
type scenario struct {
	t      *testing.T
	g      *gomega.WithT
	ctx    context.Context
	env    *environment
	ns     string
	rng    *rand.Rand
	result *Result

	monitor *invariants.Monitor
	// violations holds the first promise the monitor saw broken, for a
	// scenario that stops at once.
	violations chan invariants.Violation
	managers   []*managerproc.Manager
	proxies    []*FaultProxy
}

// newScenario creates the scenario's namespace and starts the monitor. At
// the end it stops the managers and proxies it started, shows their logs if
// the test failed, and deletes the workload and its pods, so that the next
// scenario starts on empty nodes.
func newScenario(t *testing.T, name string) *scenario {
	t.Helper()
	testenv.RequireAssets(t)
	e := setUp(t)
	// Each scenario draws from a sequence of its own: replaying one with
	// -run makes the same choices as in the run that failed.
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	result := report.Add(name)
	s := &scenario{
		t: t, g: gomega.NewWithT(t), ctx: t.Context(), env: e, result: result,
		// Namespaces stay, with no namespace controller to finalize them:
		// a scenario run again (-count) takes a new one.
		ns:         fmt.Sprintf("chaos-%s-%d", name, result.Run),
		rng:        rand.New(rand.NewPCG(seed, h.Sum64())), //nolint:gosec // repeatable draws, not secrets
		violations: make(chan invariants.Violation, 1),
	}
	s.g.Expect(e.client.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}})).To(gomega.Succeed())
	t.Cleanup(s.tearDown)
	var err error
	s.monitor, err = invariants.Start(s.ctx, e.admin, s.ns, invariants.Options{
		OnViolation: func(v invariants.Violation) {
			select {
			case s.violations <- v:
			default:
			}
		},
		// The manager's watches lag on a busy machine, more so under the
		// walk's pods failing on their own.
		ReactionTime: reactionTime,
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	return s
}

func (s *scenario) tearDown() {
	for _, m := range s.managers {
		s.g.Expect(m.Stop()).To(gomega.Succeed())
	}
	for _, p := range s.proxies {
		s.g.Expect(p.Close()).To(gomega.Succeed())
	}
	if s.monitor != nil {
		s.monitor.Stop()
	}
	if s.t.Failed() {
		for _, m := range s.managers {
			s.t.Logf("==== %s ====\n%s", m.LogPath(), daemon.Tail(m.LogPath(), 80))
		}
	}
	// t.Context is done once cleanup runs.
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	err := s.env.client.DeleteAllOf(ctx, &v1alpha1.ExtendedDaemonSet{}, client.InNamespace(s.ns),
		client.PropagationPolicy(metav1.DeletePropagationBackground))
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		pods, err := s.env.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, nil
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred(), "pods of %s not deleted", s.ns)
}

// startManager starts a manager named name with kubeconfig and args.
func (s *scenario) startManager(name, kubeconfig string, args ...string) *managerproc.Manager {
	s.t.Helper()
	m, err := managerproc.Start(s.ctx, managerproc.Options{
		Name: name, Binary: s.env.binary, Kubeconfig: kubeconfig,
		LogPath:                 filepath.Join(s.env.dir, s.ns+"-"+name+".log"),
		LeaderElectionNamespace: rbacinstall.Namespace, Args: args,
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.managers = append(s.managers, m)
	return m
}

// startProxy starts a fault proxy in front of the API server, injecting
// nothing until told a rate, and writes a kubeconfig through it with the
// manager's identity.
func (s *scenario) startProxy() (*FaultProxy, string) {
	s.t.Helper()
	p, err := StartFaultProxy(ProxyOptions{Upstream: s.env.identity, Seed: s.rng.Uint64()})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.proxies = append(s.proxies, p)
	kubeconfig := filepath.Join(s.env.dir, s.ns+"-proxy.kubeconfig")
	cfg := p.Config()
	cfg.BearerToken = s.env.identity.BearerToken
	s.g.Expect(WriteKubeconfig(cfg, kubeconfig)).To(gomega.Succeed())
	return p, kubeconfig
}

// leaseHolder is the identity holding the manager's lease, empty when
// none does.
func (s *scenario) leaseHolder(ctx context.Context) (string, error) {
	lease, err := s.env.kube.CoordinationV1().Leases(rbacinstall.Namespace).Get(ctx, leaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), nil
}

// waitLeader waits until a manager other than previous holds the lease,
// and returns it and when it was first seen.
func (s *scenario) waitLeader(previous string) (string, time.Time) {
	s.t.Helper()
	var holder string
	err := wait.PollUntilContextTimeout(s.ctx, 100*time.Millisecond, leaderTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		holder, err = s.leaseHolder(ctx)
		return err == nil && holder != "" && holder != previous, nil
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred(), "no manager but %q leads; exits: %v", previous, s.exits())
	return holder, time.Now()
}

// exits lists the times the scenario's managers exited by themselves.
func (s *scenario) exits() []string {
	var all []string
	for _, m := range s.managers {
		all = append(all, m.Exits()...)
	}
	return all
}

// agent is a node agent on every node whose new templates go to a canary
// of 5% of the nodes for canaryDuration first, then to the others under a
// budget of 10% unavailable.
func (s *scenario) agent(version string, canaryDuration time.Duration) *v1alpha1.ExtendedDaemonSet {
	s.t.Helper()
	labels := map[string]string{"app": "agent"}
	eds := &v1alpha1.ExtendedDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: s.ns},
		Spec: v1alpha1.ExtendedDaemonSetSpec{
			Selector: &v1alpha1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: agentImage(version)}}},
			},
			Strategy: v1alpha1.ExtendedDaemonSetStrategy{
				RollingUpdate: v1alpha1.RollingUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromString("10%"))},
				Canary: &v1alpha1.CanaryStrategy{
					Replicas: ptr.To(intstr.FromString("5%")),
					Duration: &metav1.Duration{Duration: canaryDuration},
				},
			},
		},
	}
	s.g.Expect(s.env.client.Create(s.ctx, eds)).To(gomega.Succeed())
	return eds
}

func agentImage(version string) string { return "registry.example/agent:" + version }

// setVersion changes eds's template to version and counts the rollout.
func (s *scenario) setVersion(eds *v1alpha1.ExtendedDaemonSet, version string) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.env.client.Get(s.ctx, client.ObjectKeyFromObject(eds), eds); err != nil {
			return err
		}
		eds.Spec.Template.Spec.Containers[0].Image = agentImage(version)
		return s.env.client.Update(s.ctx, eds)
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.result.Rollouts++
}

// waitRolledOut waits until rolledOut says eds runs version everywhere.
func (s *scenario) waitRolledOut(eds *v1alpha1.ExtendedDaemonSet, version string) {
	s.t.Helper()
	var waiting string
	err := wait.PollUntilContextTimeout(s.ctx, pollInterval, prof.rolloutTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		waiting, err = s.rolledOut(ctx, eds, version)
		if err != nil {
			waiting = err.Error()
		}
		return waiting == "", nil
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred(), "%s not rolled out: %s; manager exits: %v", version, waiting, s.exits())
}

// rolledOut returns what eds still waits for before it runs version on
// every node, or "" once it does: its status Ready for its generation with
// no canary, its active replica set of version, and on every node exactly
// one pod, of that replica set, Running and Ready.
func (s *scenario) rolledOut(ctx context.Context, eds *v1alpha1.ExtendedDaemonSet, version string) (string, error) {
	latest := &v1alpha1.ExtendedDaemonSet{}
	if err := s.env.client.Get(ctx, client.ObjectKeyFromObject(eds), latest); err != nil {
		return "", err
	}
	st := latest.Status
	switch {
	case st.ObservedGeneration != latest.Generation:
		return fmt.Sprintf("generation %d observed, %d written", st.ObservedGeneration, latest.Generation), nil
	case !apimeta.IsStatusConditionTrue(st.Conditions, v1alpha1.ReadyCondition):
		return fmt.Sprintf("not Ready: %v", st.Conditions), nil
	case st.Canary != nil:
		return fmt.Sprintf("canary %s running", st.Canary.ReplicaSet), nil
	}
	active := &v1alpha1.ExtendedDaemonSetReplicaSet{}
	if err := s.env.client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: st.ActiveReplicaSet}, active); err != nil {
		return "", err
	}
	if image := active.Spec.Template.Spec.Containers[0].Image; image != agentImage(version) {
		return fmt.Sprintf("active replica set %s runs %s", active.Name, image), nil
	}
	// From the API server's watch cache: this polls.
	nodes, err := s.env.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return "", err
	}
	pods, err := s.env.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return "", err
	}
	podsOn := map[string][]*corev1.Pod{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		podsOn[placement.TargetNode(pod)] = append(podsOn[placement.TargetNode(pod)], pod)
	}
	for _, node := range nodes.Items {
		on := podsOn[node.Name]
		delete(podsOn, node.Name)
		if len(on) != 1 {
			return fmt.Sprintf("node %s runs %d pods", node.Name, len(on)), nil
		}
		pod := on[0]
		switch {
		case pod.Labels[v1alpha1.ExtendedDaemonSetReplicaSetNameLabel] != active.Name:
			return fmt.Sprintf("pod %s on %s is not of %s", pod.Name, node.Name, active.Name), nil
		case pod.DeletionTimestamp != nil || !invariants.RunningAndReady(pod):
			return fmt.Sprintf("pod %s on %s is not Running and Ready", pod.Name, node.Name), nil
		}
	}
	for node := range podsOn {
		return fmt.Sprintf("pods on %q, not a node", node), nil
	}
	return "", nil
}

// verify stops the monitor and checks what every scenario promises: no
// violation, no pod created twice for a node, no transition told twice,
// no request the manager's roles refused. It records the counts first, so
// that the report shows them for a failed scenario too.
func (s *scenario) verify() {
	s.t.Helper()
	seen := s.monitor.Stop()
	s.monitor = nil
	twice := podsCreatedTwice(seen.PodsCreated)
	told, err := s.transitionsToldTwice()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	forbidden := s.forbidden()
	exits := s.exits()
	s.result.Violations, s.result.PodsCreatedTwice = len(seen.Violations), len(twice)
	s.result.TransitionsToldTwice, s.result.Forbidden, s.result.ManagerExits = len(told), len(forbidden), len(exits)
	for _, exit := range exits {
		s.t.Log(exit)
	}

	s.g.Expect(seen.PodsCreated).NotTo(gomega.BeEmpty(), "the monitor saw no pod created: it checked nothing")
	s.g.Expect(seen.Violations).To(gomega.BeEmpty(), "invariant violations; what the monitor saw:\n%s", seen)
	s.g.Expect(twice).To(gomega.BeEmpty(), "pods created twice for one node by one replica set; what the monitor saw:\n%s", seen)
	s.g.Expect(told).To(gomega.BeEmpty(), "transitions told more than once")
	s.g.Expect(forbidden).To(gomega.BeEmpty(), "requests the manager's roles refused")
}

// podsCreatedTwice returns the "node/replicaSet" keys with more than one
// pod created, with their counts.
func podsCreatedTwice(created map[string]int) []string {
	var twice []string
	for key, n := range created {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s: %d pods", key, n))
		}
	}
	slices.Sort(twice)
	return twice
}

// canaryTransitions are told once per canary replica set; the other
// transitions once per message, which names what changed.
var (
	canaryTransitions = []string{canary.Started, canary.Promoted, canary.Failed, canary.Retried, canary.Paused, canary.Resumed}
	otherTransitions  = []string{"RollingUpdateStarted", "RolledOut"}
)

// transitionsToldTwice returns the transitions told more than once in the
// scenario's namespace, as separate events or as one event's series, each
// with who told it when.
func (s *scenario) transitionsToldTwice() ([]string, error) {
	var events eventsv1.EventList
	if err := s.env.client.List(context.WithoutCancel(s.ctx), &events, client.InNamespace(s.ns)); err != nil {
		return nil, err
	}
	told := map[string]int{}
	tellers := map[string][]string{}
	for _, e := range events.Items {
		key := e.Reason + " " + e.Regarding.Name
		switch {
		case slices.Contains(canaryTransitions, e.Reason) && e.Related != nil:
			key += " canary " + e.Related.Name
		case slices.Contains(otherTransitions, e.Reason):
			key += ": " + e.Note
		default:
			continue
		}
		n, teller := 1, fmt.Sprintf("%s at %s", e.ReportingInstance, e.EventTime.Format(eventTimeFormat))
		if e.Series != nil {
			n = max(n, int(e.Series.Count))
			teller += fmt.Sprintf(", %d times until %s", e.Series.Count, e.Series.LastObservedTime.Format(eventTimeFormat))
		}
		told[key] += n
		tellers[key] = append(tellers[key], teller)
	}
	var twice []string
	for key, n := range told {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s: told %d times (%s)", key, n, strings.Join(tellers[key], "; ")))
		}
	}
	slices.Sort(twice)
	return twice, nil
}

const eventTimeFormat = "15:04:05.000000"

// apfProbe is the request Flux's runtime sends as the manager starts, to
// learn whether API Priority and Fairness is on: it reads the headers APF
// sets before authorization, so whatever the answer, it learns what it
// asked. No default role grants it.
const apfProbe = "HEAD /livez/ping"

// forbidden returns the requests the API server refused to the manager,
// from the managers' logs and the proxies' counts, but the APF probe.
func (s *scenario) forbidden() []string {
	var all []string
	for _, m := range s.managers {
		lines, err := m.Forbidden()
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
		all = append(all, lines...)
	}
	for _, p := range s.proxies {
		all = append(all, slices.DeleteFunc(p.Stats().Forbidden, func(r string) bool { return r == apfProbe })...)
	}
	return all
}

// sleep waits d unless the test ends first.
func (s *scenario) sleep(d time.Duration) {
	select {
	case <-time.After(d):
	case <-s.ctx.Done():
	}
}

// events returns the events of reason about eds's replica set rs.
func (s *scenario) events(reason, rs string) ([]string, error) {
	var events eventsv1.EventList
	if err := s.env.client.List(s.ctx, &events, client.InNamespace(s.ns)); err != nil {
		return nil, err
	}
	var notes []string
	for _, e := range events.Items {
		if e.Reason == reason && e.Related != nil && e.Related.Name == rs {
			notes = append(notes, e.Note)
		}
	}
	return notes, nil
}
