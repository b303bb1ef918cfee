// discovery ENDPOINT TOKEN_FILE PIN OUT: kubeadm's own bootstrap-token
// discovery (k8s.io/kubernetes/cmd/kubeadm/app/discovery, the code `kubeadm
// join` runs) writing bootstrap-kubelet.conf to OUT as kubeadm's
// kubelet-start phase writes it. The e2e suite compares kjoin's file with
// this one byte for byte.
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	"k8s.io/kubernetes/cmd/kubeadm/app/discovery"
	kubeconfigutil "k8s.io/kubernetes/cmd/kubeadm/app/util/kubeconfig"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: discovery ENDPOINT TOKEN_FILE PIN OUT")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	token := strings.TrimSpace(string(raw))
	cfg := &kubeadmapi.JoinConfiguration{
		Discovery: kubeadmapi.Discovery{
			BootstrapToken: &kubeadmapi.BootstrapTokenDiscovery{
				Token:             token,
				APIServerEndpoint: os.Args[1],
				CACertHashes:      []string{os.Args[3]},
			},
			TLSBootstrapToken: token,
		},
		Timeouts: &kubeadmapi.Timeouts{Discovery: &metav1.Duration{Duration: time.Minute}},
	}
	config, err := discovery.For(nil, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := kubeconfigutil.WriteToDisk(os.Args[4], config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
