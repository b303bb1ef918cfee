// etcd-release: the etcd server of the release kubeadm's newest control plane runs
// (go.etcd.io/etcd/server/v3 at the version k8s.io/kubernetes requires),
// for the control-plane images of the node lab: Debian's etcd is older
// than the flags kubeadm's etcd.yaml passes.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
