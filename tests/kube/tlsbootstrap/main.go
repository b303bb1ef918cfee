// tlsbootstrap BOOTSTRAP_KUBECONFIG KUBECONFIG_OUT CERT_DIR NODE_NAME: the
// kubelet's own TLS bootstrap (k8s.io/kubernetes/pkg/kubelet/certificate/
// bootstrap, the code a kubelet runs before it starts), as a program: a key,
// a CSR with the bootstrap token, the wait for its certificate, then
// KUBECONFIG_OUT and the certificate in CERT_DIR. make bench runs a herd of
// them beside kjoin's own (tests/bench/herd.sh).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/certificate/bootstrap"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: tlsbootstrap BOOTSTRAP_KUBECONFIG KUBECONFIG_OUT CERT_DIR NODE_NAME")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if err := bootstrap.LoadClientCert(ctx, os.Args[2], os.Args[1], os.Args[3], types.NodeName(os.Args[4])); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
