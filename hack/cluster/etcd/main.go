// Command etcd is the etcd server, built from the Go module proxy so the
// local control plane needs no download of a prebuilt binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
