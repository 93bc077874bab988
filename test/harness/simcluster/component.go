package simcluster

import (
	"path/filepath"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/test/harness/testenv"
	"github.com/extendeddaemonset/extendeddaemonset/test/internal/daemon"
)

// stopGrace is how long a component may take to exit after SIGTERM.
const stopGrace = 10 * time.Second

// component is one running binary of the cluster.
type component = daemon.Daemon

// startComponent starts the binary name from the assets directory with args,
// followed by any extra arguments the caller gave for it, logging to
// LogDir/name.log and to opts.Logs.
func (c *Cluster) startComponent(name string, env []string, args ...string) (*component, error) {
	path, err := testenv.AssetPath(name)
	if err != nil {
		return nil, err
	}
	spec := daemon.Spec{
		Name:    name,
		Path:    path,
		Args:    append(args, c.opts.ExtraArgs[name]...),
		Env:     env,
		Dir:     c.dir,
		LogPath: filepath.Join(c.logDir, name+".log"),
	}
	if c.opts.Logs != nil {
		spec.Logs = daemon.NewPrefixWriter(&c.logMu, c.opts.Logs, "["+name+"] ")
	}
	return daemon.Start(spec)
}
