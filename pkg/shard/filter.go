package shard

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Filter is an informer's ListerWatcher that passes on only the objects of
// the Set's held shards, so the cache holds this replica's share. When the
// held shards change it ends the watch; the next watch catches the cache up
// (the new shards' objects arrive, the dropped ones' leave) and goes on.
//
// With ServerField set, each list and watch also asks the API server for
// only those shards (shardSelector, feature gate ShardedListAndWatch); an
// API server without the gate ignores the field, and the filter here still
// keeps the caches to the share.
type Filter struct {
	set         *Set
	example     runtime.Object // an empty object of the informer's type
	list        cache.ListWithContextFunc
	watch       cache.WatchFuncWithContext
	serverField string

	mu       sync.Mutex
	indexer  cache.Indexer
	current  *filteredWatch
	listGen  uint64          // the Set's generation of the last list
	watching bool            // a watch follows that list: the informer took it in
	pending  map[string]bool // keys of the last list not yet seen in the indexer
	// serverSelected says the API server applied the last list's
	// shardSelector (its response carries shardInfo).
	serverSelected bool
}

// NewFilter returns a filter for set over list and watch of objects of
// example's type, registered with
// set so Set.Hold waits for it after an acquisition. serverField, when not
// empty, is sent as the shardSelector field.
func NewFilter(set *Set, example runtime.Object, list cache.ListWithContextFunc, watch cache.WatchFuncWithContext, serverField string) *Filter {
	f := &Filter{set: set, example: example, list: list, watch: watch, serverField: serverField}
	set.mu.Lock()
	set.filters = append(set.filters, f)
	set.mu.Unlock()
	set.OnChange(f.relist)
	return f
}

// SetIndexer gives the filter the cache of the informer it feeds, to tell
// when a list has reached it.
func (f *Filter) SetIndexer(indexer cache.Indexer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexer = indexer
}

// IsWatchListSemanticsUnSupported keeps the reflector to list-then-watch:
// the filter counts a list as reached the cache once the watch after it
// starts.
func (f *Filter) IsWatchListSemanticsUnSupported() bool { return true }

// List lists the held shards' objects.
func (f *Filter) List(opts metav1.ListOptions) (runtime.Object, error) {
	return f.ListWithContext(context.Background(), opts)
}

// ListWithContext lists the held shards' objects.
func (f *Filter) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	held, gen := f.set.Held()
	f.selectOnServer(&opts, held)
	obj, err := f.list(ctx, opts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return nil, err
	}
	kept := items[:0]
	pending := map[string]bool{}
	for _, item := range items {
		if m, err := meta.Accessor(item); err == nil && f.set.Owns(KeyOf(m)) {
			kept = append(kept, item)
			pending[m.GetNamespace()+"/"+m.GetName()] = true
		}
	}
	if err := meta.SetList(obj, kept); err != nil {
		return nil, err
	}
	selected := false
	if a, ok := obj.(metav1.ListMetaAccessor); ok {
		if lm, ok := a.GetListMeta().(*metav1.ListMeta); ok && lm.ShardInfo != nil {
			selected = true
		}
	}
	f.mu.Lock()
	f.listGen, f.watching, f.pending = gen, false, pending
	changed := f.serverSelected != selected
	f.serverSelected = selected
	f.mu.Unlock()
	if changed && f.serverField != "" {
		klog.FromContext(ctx).Info("Shard selection on the API server", "selected", selected,
			"listed", len(items), "kept", len(kept))
	}
	return obj, nil
}

// Watch watches the held shards' objects.
func (f *Filter) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return f.WatchWithContext(context.Background(), opts)
}

// WatchWithContext watches the held shards' objects. When the held shards
// changed since the last list, it catches the cache up first, without the
// reflector listing again (which it would do only after a growing
// back-off): it lists the held shards now, and the watch begins with an add
// for each listed object and a delete for each cached one not listed, then
// goes on from the list's resourceVersion.
func (f *Filter) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	held, gen := f.set.Held()
	f.mu.Lock()
	stale := f.listGen != gen
	f.mu.Unlock()
	var catchUp []watch.Event
	if stale {
		events, rv, err := f.catchUp(ctx, held)
		if err != nil {
			return nil, err
		}
		catchUp, opts.ResourceVersion = events, rv
	}
	f.selectOnServer(&opts, held)
	w, err := f.watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	fw := &filteredWatch{f: f, in: w, out: make(chan watch.Event), stop: make(chan struct{}), ended: make(chan struct{})}
	f.mu.Lock()
	f.watching = f.listGen == gen
	f.current = fw
	f.mu.Unlock()
	if f.set.Generation() != gen {
		// Changed while the watch opened, after relist looked.
		fw.end()
	}
	go fw.run(catchUp)
	return fw, nil
}

// catchUp lists the held shards' objects and returns the events that bring
// the cache to that list, and the list's resourceVersion.
func (f *Filter) catchUp(ctx context.Context, held []int) ([]watch.Event, string, error) {
	opts := metav1.ListOptions{}
	f.selectOnServer(&opts, held)
	obj, err := f.ListWithContext(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	items, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return nil, "", err
	}
	listed := map[string]bool{}
	var events []watch.Event
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			continue
		}
		listed[m.GetNamespace()+"/"+m.GetName()] = true
		events = append(events, watch.Event{Type: watch.Added, Object: item})
	}
	f.mu.Lock()
	indexer := f.indexer
	f.mu.Unlock()
	if indexer != nil {
		for _, cached := range indexer.List() {
			m, err := meta.Accessor(cached)
			if err != nil || listed[m.GetNamespace()+"/"+m.GetName()] {
				continue
			}
			// The reflector takes only its own type: the cache form (slim)
			// is not it, so the delete carries a bare object of the type
			// with the metadata that key it.
			o := f.example.DeepCopyObject()
			if om, err := meta.Accessor(o); err == nil {
				om.SetNamespace(m.GetNamespace())
				om.SetName(m.GetName())
				om.SetUID(m.GetUID())
				om.SetResourceVersion(m.GetResourceVersion())
				om.SetOwnerReferences(m.GetOwnerReferences())
			}
			events = append(events, watch.Event{Type: watch.Deleted, Object: o})
		}
	}
	rv := ""
	if a, err := meta.ListAccessor(obj); err == nil {
		rv = a.GetResourceVersion()
	}
	return events, rv, nil
}

func (f *Filter) selectOnServer(opts *metav1.ListOptions, held []int) {
	if f.serverField != "" && len(held) > 0 {
		opts.ShardSelector = Selector(f.serverField, held, f.set.N())
	}
}

// relist ends the current watch, so the reflector watches again and the
// new watch catches the cache up with the shards held now.
func (f *Filter) relist() {
	f.mu.Lock()
	fw := f.current
	f.current = nil
	f.mu.Unlock()
	if fw != nil {
		fw.end()
	}
}

// caughtUp reports whether the cache holds the shards held at generation
// gen: a list at or after gen reached it. (Called with the Set locked.)
func (f *Filter) caughtUp(gen uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listGen < gen || !f.watching {
		return false
	}
	if f.indexer == nil {
		return len(f.pending) == 0
	}
	for key := range f.pending {
		if _, ok, _ := f.indexer.GetByKey(key); !ok {
			return false
		}
		delete(f.pending, key)
	}
	return true
}

// ServerSelected reports whether the API server applied the last list's
// shardSelector.
func (f *Filter) ServerSelected() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.serverSelected
}

// deleted forgets a listed key the cache will never show.
func (f *Filter) deleted(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pending, key)
}

// inCache reports whether the informer's cache holds key.
func (f *Filter) inCache(key string) bool {
	f.mu.Lock()
	indexer := f.indexer
	f.mu.Unlock()
	if indexer == nil {
		return false
	}
	_, ok, _ := indexer.GetByKey(key)
	return ok
}

// filteredWatch passes on the events of the held shards, after the
// catch-up events it starts with. An object that leaves the held shards (a
// Job whose controller reference is removed) leaves the cache as deleted.
type filteredWatch struct {
	f        *Filter
	in       watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	ended    chan struct{}
	endOnce  sync.Once
}

func (w *filteredWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *filteredWatch) Stop() {
	w.stopOnce.Do(func() {
		close(w.stop)
		w.in.Stop()
	})
}

// end closes the watch as an API server closes one: the reflector watches
// again from the last resourceVersion it saw.
func (w *filteredWatch) end() {
	w.endOnce.Do(func() { close(w.ended) })
}

func (w *filteredWatch) run(catchUp []watch.Event) {
	defer close(w.out)
	defer w.in.Stop()
	for _, e := range catchUp {
		if !w.send(e) {
			return
		}
	}
	for {
		select {
		case <-w.stop:
			return
		case <-w.ended:
			return
		case e, ok := <-w.in.ResultChan():
			if !ok {
				return
			}
			if e, ok := w.filter(e); ok && !w.send(e) {
				return
			}
		}
	}
}

func (w *filteredWatch) send(e watch.Event) bool {
	select {
	case w.out <- e:
		return true
	case <-w.stop:
		return false
	}
}

func (w *filteredWatch) filter(e watch.Event) (watch.Event, bool) {
	if e.Type != watch.Added && e.Type != watch.Modified && e.Type != watch.Deleted {
		return e, true // bookmarks and errors
	}
	m, err := meta.Accessor(e.Object)
	if err != nil {
		return e, true
	}
	key := m.GetNamespace() + "/" + m.GetName()
	if e.Type == watch.Deleted {
		w.f.deleted(key)
	}
	if w.f.set.Owns(KeyOf(m)) {
		return e, true
	}
	if e.Type == watch.Modified && w.f.inCache(key) {
		return watch.Event{Type: watch.Deleted, Object: e.Object}, true
	}
	return e, false
}
