package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

const namespace = "bench"

func createTemplate(ctx context.Context, client kubernetes.Interface) error {
	template := kit.ShareTemplate("share", "8Gi", "10")
	_, err := client.ResourceV1().ResourceClaimTemplates(namespace).Create(ctx, template, metav1.CreateOptions{})
	return err
}

func waitServiceAccount(ctx context.Context, client kubernetes.Interface) error {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := client.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
	}
	return fmt.Errorf("no default ServiceAccount in %s", namespace)
}

// podFor is pod i of the row.
func podFor(row string, i int) *corev1.Pod {
	limits := corev1.ResourceList{}
	switch {
	case isShare(row) && i%2 == 0:
		limits["nvidia.com/gpu"] = resource.MustParse("1")
		limits["nvidia.com/gpumem"] = resource.MustParse("8000")
		limits["nvidia.com/gpucores"] = resource.MustParse("10")
	case isShare(row):
		limits["volcano.sh/vgpu-number"] = resource.MustParse("1")
		limits["volcano.sh/vgpu-memory"] = resource.MustParse("8000")
		limits["volcano.sh/vgpu-cores"] = resource.MustParse("10")
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%05d", i)},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1",
				Resources: corev1.ResourceRequirements{Limits: limits,
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	if row == "dra-stock" || row == "dra-serve" {
		template := "share"
		p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}}
		p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}
	if row == "dra-serve" || row == "inprocess-direct" {
		// The webhook sends only pods asking GPU resources; claim pods name
		// the extender's profile themselves, as do the pods of the row
		// without a webhook.
		p.Spec.SchedulerName = "deviceshare-scheduler"
	}
	return p
}

// burst creates n pods from 64 goroutines and returns pods/s from the
// first creation to the last pod bound (seen by a watch), and how many
// were bound. A row that has not bound every pod by the deadline is
// reported at the rate it bound those it did: a slow row still gets a
// figure, and the caller prints the count beside it.
func burst(ctx context.Context, client kubernetes.Interface, n int, row string, deadline time.Duration) (float64, int, error) {
	w, err := client.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	defer func() { w.Stop() }()
	start := time.Now()
	var failed atomic.Value
	work := make(chan int)
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := client.CoreV1().Pods(namespace).Create(ctx, podFor(row, i), metav1.CreateOptions{}); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	go func() {
		for i := 0; i < n; i++ {
			work <- i
		}
		close(work)
	}()
	bound := map[string]bool{}
	timeout := time.After(deadline)
	for len(bound) < n {
		select {
		case event, ok := <-w.ResultChan():
			if !ok {
				// A watch may end at any time: list what is bound and
				// watch again from there.
				list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
				if err != nil {
					return 0, len(bound), err
				}
				for _, p := range list.Items {
					if p.Spec.NodeName != "" {
						bound[p.Name] = true
					}
				}
				w, err = client.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
				if err != nil {
					return 0, len(bound), err
				}
				continue
			}
			if event.Type == watch.Error {
				return 0, len(bound), fmt.Errorf("watch: %v", event.Object)
			}
			if p, isPod := event.Object.(*corev1.Pod); isPod && event.Type != watch.Deleted && p.Spec.NodeName != "" {
				bound[p.Name] = true
			}
		case <-timeout:
			return float64(len(bound)) / time.Since(start).Seconds(), len(bound), nil
		}
		if err, ok := failed.Load().(error); ok {
			return 0, len(bound), fmt.Errorf("create: %w", err)
		}
	}
	elapsed := time.Since(start)
	wg.Wait()
	return float64(n) / elapsed.Seconds(), n, nil
}
