// Command etcd is the etcd server of the test harness, built from the Go
// module proxy because etcd's own module cannot be installed with go install.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
