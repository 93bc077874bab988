package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options are the settings every command shares: kubectl's connection
// flags and the terminal streams.
type Options struct {
	genericiooptions.IOStreams
	Config *genericclioptions.ConfigFlags

	// newClient builds the client; tests swap it to count or fail.
	newClient func(*rest.Config) (client.Client, error)
}

// NewOptions are the defaults for streams.
func NewOptions(streams genericiooptions.IOStreams) *Options {
	return &Options{
		IOStreams: streams,
		Config:    genericclioptions.NewConfigFlags(true),
		newClient: func(cfg *rest.Config) (client.Client, error) {
			return client.New(cfg, client.Options{Scheme: Scheme()})
		},
	}
}

// RESTConfig is the connection the flags and the kubeconfig describe.
func (o *Options) RESTConfig() (*rest.Config, error) {
	cfg, err := o.Config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	return cfg, nil
}

// Client reads and writes ExtendedDaemonSets and the core kinds.
func (o *Options) Client() (client.Client, error) {
	cfg, err := o.RESTConfig()
	if err != nil {
		return nil, err
	}
	c, err := o.newClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	return c, nil
}

// Clientset is client-go's typed client, for what controller-runtime's
// client does not do (pod logs, event listing across versions).
func (o *Options) Clientset() (kubernetes.Interface, error) {
	cfg, err := o.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// Namespace is -n, else the kubeconfig context's namespace, else default.
func (o *Options) Namespace() (string, error) {
	ns, _, err := o.Config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// AddFlags puts kubectl's connection flags on the root command.
func (o *Options) AddFlags(root *cobra.Command) {
	o.Config.AddFlags(root.PersistentFlags())
	_ = root.RegisterFlagCompletionFunc("namespace", o.completeNamespaces)
}

// SetClientFactory replaces how the client is built: tests use it to
// inject faults or count requests.
func (o *Options) SetClientFactory(f func(*rest.Config) (client.Client, error)) { o.newClient = f }
