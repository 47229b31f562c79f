package main

import (
	"context"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	toolswatch "k8s.io/client-go/tools/watch"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// updateWatch keeps when each update of the namespace's CronJobs came, as
// their metadata's watch sees it: in a firing, the status writes. Set
// against when the Jobs were seen, it says whether the controller's status
// writes met the creates still to be seen (#40). A metadata watch costs
// the API server little more: the garbage collector keeps one already.
type updateWatch struct {
	w  *toolswatch.RetryWatcher
	mu sync.Mutex
	at []time.Time
	// failed: the watch reported an error or ended early, so updates
	// after it may be missing.
	failed, stopped bool
}

func watchUpdates(ctx context.Context, kubeconfig, ns string, builtin bool) (*updateWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	gvr := cronv1.SchemeGroupVersion.WithResource("cronjobs")
	if builtin {
		gvr = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	}
	res := client.Resource(gvr).Namespace(ns)
	list, err := res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	w, err := toolswatch.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, opts)
		},
	})
	if err != nil {
		return nil, err
	}
	u := &updateWatch{w: w}
	go func() {
		for ev := range w.ResultChan() {
			u.mu.Lock()
			switch ev.Type {
			case watch.Modified:
				u.at = append(u.at, time.Now())
			case watch.Error:
				u.failed = true
			}
			u.mu.Unlock()
		}
		u.mu.Lock()
		u.failed = u.failed || !u.stopped // ended before stop: later updates unseen
		u.mu.Unlock()
	}()
	return u, nil
}

// between counts the updates seen from from until to, and gives the
// first of them (zero if none); ok is false when the watch failed, so
// the count may be short.
func (u *updateWatch) between(from, to time.Time) (n int, first time.Time, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	ok = !u.failed
	for _, at := range slices.SortedFunc(slices.Values(u.at), time.Time.Compare) {
		if at.Before(from) || at.After(to) {
			continue
		}
		if n == 0 {
			first = at
		}
		n++
	}
	return n, first, ok
}

func (u *updateWatch) stop() {
	u.mu.Lock()
	u.stopped = true
	u.mu.Unlock()
	u.w.Stop()
}
