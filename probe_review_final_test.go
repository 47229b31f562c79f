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
// missed, never started. Backfills likewise need their controller.
func TestProbeShardedWiresCalendarsAndBackfills(t *testing.T) {
	t.Skip("FINDING: runShardedController builds the controller without WithCalendars (every run of a CronJob with excludeCalendars is held as CalendarNotFound under -shards) and never starts NewBackfillController (Backfills do nothing); neither is documented")
	unsharded := calledIn(t, "run")
	sharded := calledIn(t, "runShardedController")
	for _, name := range []string{"WithCalendars", "NewBackfillController"} {
		if unsharded[name] && !sharded[name] {
			t.Errorf("the unsharded controller calls %s, runShardedController does not", name)
		}
	}
}

// The Backfill controller reads its own status from the cache alone. A
// Job it made and that was deleted (ttlSecondsAfterFinished, which README
// suggests for Backfill Jobs) before the echo of the status write
// recording it reached the cache leaves the stale lastHandledTime as the
// only record: the next sync creates the same time again. (The CronJob
// controller covers this window with ownwrites and the run-record
// finalizer; the Backfill controller has neither, nor a takeover barrier.)
func TestProbeBackfillStaleCacheAfterTTLCreatesTwice(t *testing.T) {
	t.Skip("FINDING: a Backfill Job deleted by TTL before the Backfill's status echo reaches the cache is created a second time (no own-writes overlay for Backfill status)")
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
