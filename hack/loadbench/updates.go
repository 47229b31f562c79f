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
	"k8s.io/client-go/tools/clientcmd"
	toolswatch "k8s.io/client-go/tools/watch"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// drained is a resumed watch read to its end by a goroutine of its own; it
// knows whether the watch failed (an error, or its end before stop), so that
// what it saw may be short.
type drained struct {
	w               *toolswatch.RetryWatcher
	mu              sync.Mutex
	failed, stopped bool
}

// drain reads w, handing each event but an error to on (if given).
func drain(w *toolswatch.RetryWatcher, on func(watch.Event)) *drained {
	d := &drained{w: w}
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				d.mu.Lock()
				d.failed = true
				d.mu.Unlock()
			} else if on != nil {
				on(ev)
			}
		}
		d.mu.Lock()
		d.failed = d.failed || !d.stopped
		d.mu.Unlock()
	}()
	return d
}

// ok reports that the watch has not failed.
func (d *drained) ok() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.failed
}

func (d *drained) stop() {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	d.w.Stop()
}

// updateWatch keeps when each update of the namespace's CronJobs came, as
// their metadata's watch sees it: in a firing, the status writes. Set
// against when the Jobs were seen, it says whether the controller's status
// writes met the creates still to be seen. A metadata watch costs the API
// server little more: the garbage collector keeps one already.
type updateWatch struct {
	*drained
	mu sync.Mutex
	at []time.Time
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
	w, err := resumeFrom(ctx, list.ResourceVersion, res.Watch)
	if err != nil {
		return nil, err
	}
	u := &updateWatch{}
	u.drained = drain(w, func(ev watch.Event) {
		if ev.Type == watch.Modified {
			u.mu.Lock()
			u.at = append(u.at, time.Now())
			u.mu.Unlock()
		}
	})
	return u, nil
}

// between counts the updates seen from from until to, and gives the
// first of them (zero if none); ok is false when the watch failed, so
// the count may be short.
func (u *updateWatch) between(from, to time.Time) (n int, first time.Time, ok bool) {
	ok = u.ok()
	u.mu.Lock()
	defer u.mu.Unlock()
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
