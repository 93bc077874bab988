package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

const (
	// stepTimeout bounds each chapter's wait; a whole story takes about
	// two minutes.
	stepTimeout = 2 * time.Minute
	// badErrorRate is the share of requests the bad version fails, well
	// above the analysis' 5%.
	badErrorRate = 0.3
)

// playStory plays the story on the running demo the kubeconfig reaches,
// else on an environment of its own.
func playStory(ctx context.Context, opts options) error {
	if c, err := runningDemo(ctx, opts.kubeconfig); err == nil {
		logf("playing on the running demo of %s", opts.kubeconfig)
		return (&story{c: c, kubeconfig: opts.kubeconfig, plugin: opts.plugin}).play(ctx)
	}
	dir, err := os.MkdirTemp("", "eds-demo-kubeconfig-")
	if err != nil {
		return fmt.Errorf("creating a directory for the kubeconfig: %w", err)
	}
	defer os.RemoveAll(dir)
	kubeconfig := dir + "/kubeconfig"
	return withEnvironment(ctx, opts, kubeconfig, func(env *environment) error {
		s := &story{c: env.client, kubeconfig: kubeconfig, plugin: opts.plugin, prometheus: env.prom.URL()}
		return s.play(ctx)
	})
}

// runningDemo is a client of the cluster the kubeconfig reaches, if it runs
// the demo.
func runningDemo(ctx context.Context, kubeconfig string) (client.Client, error) {
	if _, err := os.Stat(kubeconfig); err != nil {
		return nil, err
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	config.Timeout = 5 * time.Second
	c, err := client.New(config, client.Options{Scheme: scheme()})
	if err != nil {
		return nil, err
	}
	return c, c.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: demoName}, &v1alpha1.ExtendedDaemonSet{})
}

// story is the scripted tour: each chapter changes what git would change
// or runs what a person would type, then shows the result as the kubectl
// eds plugin does.
type story struct {
	c                  client.Client
	kubeconfig, plugin string
	// prometheus is the analysis' address; read from the demo when empty.
	prometheus string
	chapter    int
}

func (s *story) play(ctx context.Context) error {
	began := time.Now()
	current, err := s.currentVersion(ctx)
	if err != nil {
		return err
	}
	if current == 0 {
		current = 1
		s.title("v1 rolls out on every node")
		if err := s.apply(ctx, version{Number: current}); err != nil {
			return err
		}
	} else {
		s.title(fmt.Sprintf("v%d runs; any rollout in progress ends first", current))
	}
	if err := s.watch(ctx, 0); err != nil {
		return err
	}

	good := version{Number: current + 1}
	s.title(fmt.Sprintf("v%d, a healthy version: a canary on 2 nodes, one per zone, judged by Prometheus for 30s, then promoted zone by zone, zone-a judged again for 15s before zone-b", good.Number))
	if err := s.apply(ctx, good); err != nil {
		return err
	}
	if err := s.waitMeasured(ctx); err != nil {
		return err
	}
	if err := s.show(ctx); err != nil {
		return err
	}
	if err := s.watch(ctx, 0); err != nil {
		return err
	}

	bad := version{Number: current + 2, ErrorRate: badErrorRate}
	s.title(fmt.Sprintf("v%d fails %.0f%% of its requests: the analysis fails its canary, whose nodes go back to v%d", bad.Number, 100*bad.ErrorRate, good.Number))
	if err := s.apply(ctx, bad); err != nil {
		return err
	}
	// The watch ends with the whole status of the failed canary.
	if err := s.watch(ctx, 1); err != nil {
		return err
	}
	if err := s.checkFailedAsWritten(ctx, bad); err != nil {
		return err
	}

	s.title(fmt.Sprintf("kubectl eds canary retry: v%d is judged again, and fails again", bad.Number))
	if err := s.run(ctx, "canary", "retry", demoName); err != nil {
		return err
	}
	if err := s.waitRetried(ctx); err != nil {
		return err
	}
	if err := s.watch(ctx, 1); err != nil {
		return err
	}

	s.title(fmt.Sprintf("kubectl eds rollback: git gets v%d back, and the failed canary is gone", good.Number))
	if err := s.run(ctx, "rollback", demoName); err != nil {
		return err
	}
	if err := s.watch(ctx, 0); err != nil {
		return err
	}
	fmt.Printf("\nThe story took %s.\n", time.Since(began).Round(time.Second))
	return nil
}

func (s *story) title(text string) {
	s.chapter++
	fmt.Printf("\n== %d. %s\n\n", s.chapter, text)
}

// currentVersion is the demo's version, 0 when there is no demo yet; it
// reads the analysis' address from the demo when the story has none.
func (s *story) currentVersion(ctx context.Context) (int, error) {
	eds := &v1alpha1.ExtendedDaemonSet{}
	err := s.c.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: demoName}, eds)
	switch {
	case apierrors.IsNotFound(err) && s.prometheus != "":
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("reading the demo: %w", err)
	}
	if s.prometheus == "" {
		if c := eds.Spec.Strategy.Canary; c != nil && c.Analysis != nil && c.Analysis.Provider.Prometheus != nil {
			s.prometheus = c.Analysis.Provider.Prometheus.Address
		}
	}
	containers := eds.Spec.Template.Spec.Containers
	if len(containers) == 0 {
		return 0, errors.New("the demo has no container")
	}
	_, tag, _ := strings.Cut(containers[0].Image, ":v")
	n, err := strconv.Atoi(tag)
	if err != nil || s.prometheus == "" {
		return 0, fmt.Errorf("the demo runs %s, which the story did not write; start a fresh demo", containers[0].Image)
	}
	return n, nil
}

func (s *story) apply(ctx context.Context, v version) error {
	fmt.Printf("$ git commit: image demo-agent:v%d, ERROR_RATE=%v; the sync applies it\n", v.Number, v.ErrorRate)
	return apply(ctx, s.c, v, s.prometheus)
}

// run runs `kubectl eds args...`, its output as the story's, and fails
// unless it succeeds.
func (s *story) run(ctx context.Context, args ...string) error {
	code, err := s.pluginCode(ctx, args...)
	if err == nil && code != 0 {
		err = fmt.Errorf("kubectl eds %s exited with code %d", strings.Join(args, " "), code)
	}
	return err
}

// pluginCode runs `kubectl eds args...` and returns its exit code.
func (s *story) pluginCode(ctx context.Context, args ...string) (int, error) {
	fmt.Printf("$ kubectl eds %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, s.plugin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("running kubectl eds %s: %w", strings.Join(args, " "), err)
	}
	return 0, nil
}

// show prints the status once; it exits 1 on a failed rollout, which the
// story shows as well.
func (s *story) show(ctx context.Context) error {
	fmt.Println()
	code, err := s.pluginCode(ctx, "status", demoName)
	if err == nil && code != 0 && code != 1 {
		err = fmt.Errorf("kubectl eds status exited with code %d", code)
	}
	return err
}

// watch follows the rollout with `kubectl eds status --watch` until it
// ends, and fails unless it ends with want (0 rolled out, 1 failed).
func (s *story) watch(ctx context.Context, want int) error {
	code, err := s.pluginCode(ctx, "status", demoName, "--watch", "--timeout", stepTimeout.String())
	if err != nil {
		return err
	}
	if code != want {
		return fmt.Errorf("kubectl eds status --watch exited with %d, the story expected %d", code, want)
	}
	return nil
}

// waitMeasured waits for the canary's first measurement, so that the
// status shown has the analysis' figures.
func (s *story) waitMeasured(ctx context.Context) error {
	return s.waitFor(ctx, "the canary's first measurement", func(eds *v1alpha1.ExtendedDaemonSet) bool {
		return eds.Status.ObservedGeneration == eds.Generation && measured(eds) > 0
	})
}

// waitRetried waits until the controller has taken the retry up.
func (s *story) waitRetried(ctx context.Context) error {
	return s.waitFor(ctx, "the retried canary to run", func(eds *v1alpha1.ExtendedDaemonSet) bool {
		return eds.Status.Canary != nil && !eds.Status.Canary.Failed
	})
}

func (s *story) waitFor(ctx context.Context, what string, done func(*v1alpha1.ExtendedDaemonSet) bool) error {
	return waitForDemo(ctx, s.c, what, stepTimeout, done)
}

// measured counts the canary analysis' measurements that got a number from
// Prometheus.
func measured(eds *v1alpha1.ExtendedDaemonSet) int {
	c := eds.Status.Canary
	if c == nil || c.Analysis == nil {
		return 0
	}
	n := 0
	for _, m := range c.Analysis.Metrics {
		for _, x := range m.Measurements {
			if _, err := strconv.ParseFloat(x.Value, 64); err == nil && x.Value != "NaN" {
				n++
			}
		}
	}
	return n
}

// checkFailedAsWritten shows that the failed canary left git's spec as it
// was applied, and that kstatus, which Flux reads, calls the object Failed.
func (s *story) checkFailedAsWritten(ctx context.Context, bad version) error {
	eds := &v1alpha1.ExtendedDaemonSet{}
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: demoName}, eds); err != nil {
		return fmt.Errorf("reading the demo: %w", err)
	}
	agent := eds.Spec.Template.Spec.Containers[0]
	wantImage := fmt.Sprintf("demo-agent:v%d", bad.Number)
	if errorRate := errorRateOf(eds.Spec.Template.Spec.Containers); agent.Image != wantImage || errorRate != bad.ErrorRate {
		return fmt.Errorf("the spec was changed: image %s, ERROR_RATE %v; git wrote %s, %v", agent.Image, errorRate, wantImage, bad.ErrorRate)
	}
	fmt.Printf("\nThe spec is as git wrote it: image %s, ERROR_RATE=%v (generation %d); nothing but the status changed.\n",
		agent.Image, bad.ErrorRate, eds.Generation)

	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(eds)
	if err != nil {
		return fmt.Errorf("converting the demo for kstatus: %w", err)
	}
	result, err := status.Compute(&unstructured.Unstructured{Object: m})
	if err != nil {
		return fmt.Errorf("kstatus: %w", err)
	}
	fmt.Printf("kstatus, as Flux reads it: %s: %s\n", result.Status, result.Message)
	if result.Status != status.FailedStatus {
		return fmt.Errorf("kstatus says %s, the story expected %s", result.Status, status.FailedStatus)
	}
	return nil
}
