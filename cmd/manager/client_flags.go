package main

import flag "github.com/spf13/pflag"

// clientOptions are the client-side rate limits of the manager's requests,
// under the flag names and defaults of Flux's controllers. They are bound
// here rather than through github.com/fluxcd/pkg/runtime/client, which
// imports kstatus' polling engine and with it cli-runtime, kubectl and
// kustomize: a quarter of the binary, about 19 MB of text the kernel maps
// whole, for two flags.
type clientOptions struct {
	QPS   float32
	Burst int
}

func (o *clientOptions) BindFlags(fs *flag.FlagSet) {
	fs.Float32Var(&o.QPS, "kube-api-qps", 50.0,
		"The maximum queries-per-second of requests sent to the Kubernetes API.")
	fs.IntVar(&o.Burst, "kube-api-burst", 300,
		"The maximum burst queries-per-second of requests sent to the Kubernetes API.")
}
