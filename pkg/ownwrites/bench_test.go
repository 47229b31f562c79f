package ownwrites

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

// BenchmarkDeleted records one more released (or deleted) Job while
// `held` others wait for their echo, as in a firing of that many CronJobs:
// the cost of one record must not grow with them.
func BenchmarkDeleted(b *testing.B) {
	for _, held := range []int{100, 5000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			d := NewDeletes(testingclock.NewFakeClock(time.Unix(0, 0)), time.Minute)
			for i := range held {
				d.Deleted(types.UID(fmt.Sprint("held-", i)))
			}
			uids := make([]types.UID, 1024)
			for i := range uids {
				uids[i] = types.UID(fmt.Sprint("new-", i))
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				uid := uids[i%len(uids)]
				d.Deleted(uid)
				d.Forget(uid) // its echo
				i++
			}
		})
	}
}

// BenchmarkFailed is BenchmarkDeleted for creates whose outcome is unknown,
// as under a storm of failed creates.
func BenchmarkFailed(b *testing.B) {
	for _, held := range []int{100, 5000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			a := NewAttempts(testingclock.NewFakeClock(time.Unix(0, 0)), time.Minute)
			for i := range held {
				a.Failed(cache.ObjectName{Namespace: "ns", Name: fmt.Sprint("held-", i)}, "owner")
			}
			keys := make([]cache.ObjectName, 1024)
			for i := range keys {
				keys[i] = cache.ObjectName{Namespace: "ns", Name: fmt.Sprint("new-", i)}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				key := keys[i%len(keys)]
				a.Failed(key, "owner")
				a.Forget(key)
				i++
			}
		})
	}
}
