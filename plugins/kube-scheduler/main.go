// deviceshare-kube-scheduler is the stock kube-scheduler (Kubernetes'
// own cmd/kube-scheduler/app, the same flags and configuration) with
// deviceshare's DeviceShare plugin registered: GPU-sharing pods are
// placed by the library in-process, through cgo, instead of through the
// HTTP extender. Enable the plugin in a profile of the
// KubeSchedulerConfiguration (deploy/in-process/ has one).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/deviceshare/deviceshare/plugins/kube-scheduler/pkg/deviceshare"
)

func main() {
	command := app.NewSchedulerCommand(
		app.WithPlugin(deviceshare.Name, deviceshare.New),
	)
	os.Exit(cli.Run(command))
}
