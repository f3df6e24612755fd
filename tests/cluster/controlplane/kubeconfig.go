package controlplane

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var metav1GetOptions = metav1.GetOptions{}

// Credentials are a kubeconfig user: a bearer token or a client
// certificate.
type Credentials struct {
	Token             string
	CertFile, KeyFile string
}

// WriteKubeconfig writes a kubeconfig with one cluster, user and context,
// the way kubectl writes one.
func WriteKubeconfig(path, server, caFile string, credentials Credentials) error {
	config := clientcmdapi.NewConfig()
	config.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	config.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{
		Token:             credentials.Token,
		ClientCertificate: credentials.CertFile,
		ClientKey:         credentials.KeyFile,
	}
	config.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e", Namespace: "default"}
	config.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*config, path)
}
