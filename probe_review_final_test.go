package main

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// calledIn reports the names of the functions called inside the body of
// the top-level function fn of main.go.
func calledIn(t *testing.T, fn string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok {
					called[id.Name] = true
				}
			}
			return true
		})
	}
	if len(called) == 0 {
		t.Fatalf("no function %s in main.go", fn)
	}
	return called
}

// With -shards the controller must read Calendars as the unsharded one
// does: without WithCalendars, calendarsOf finds none, so every CronJob
// naming a Calendar has every due run held (CalendarNotFound) and counted
// missed, never started. (A finding of the final review, fixed.)
func TestShardedControllerReadsCalendars(t *testing.T) {
	if !calledIn(t, "run")["WithCalendars"] || !calledIn(t, "runShardedController")["WithCalendars"] {
		t.Error("both the unsharded controller (run) and runShardedController must call WithCalendars")
	}
}

// Backfills need their controller under -shards too.
func TestShardedRunsBackfills(t *testing.T) {
	if !calledIn(t, "runShardedController")["NewBackfillController"] {
		t.Error("runShardedController does not start the Backfill controller")
	}
}

// A Job a Backfill made and that was deleted (ttlSecondsAfterFinished)
// before the echo of the status write recording it reached the cache: the
// cached status is stale, and must not make the same time be created
// again. (A finding of the final review; the controller now decides a
// sync that creates from the Backfill read live.)
func TestProbeBackfillStaleCacheAfterTTLCreatesTwice(t *testing.T) {

	now := at(10 * time.Minute)
	cj := newCronJob(createdAt(at(-6*time.Hour)), lastScheduled(at(0)))
	stale := newBackfill(at(-5*time.Hour), at(-4*time.Hour), 1)
	f := newBackfillFixture(t, now, cj, stale)
	key := cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "bf"}
	if err := f.c.syncBackfill(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	first := f.createdJobs()
	if len(first) != 1 {
		t.Fatalf("first sync created %v", first)
	}
	// The Job ran, finished and was deleted by its TTL; the Job cache
	// saw the delete, the Backfill cache not yet the status write.
	if err := f.kubeclient.BatchV1().Jobs(metav1.NamespaceDefault).Delete(context.Background(), first[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.kubeFactory.Batch().V1().Jobs().Informer().GetIndexer().Replace(nil, ""); err != nil {
		t.Fatal(err)
	}
	f.kubeclient.ClearActions()
	_ = f.c.syncBackfill(context.Background(), key) // its status write may conflict; the create is done by then
	if again := f.createdJobs(); len(again) != 0 {
		t.Errorf("second sync from the stale Backfill created %v again: the time %v ran twice", again, at(-5*time.Hour))
	}
}
