package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cronjob-controller/cronjob-controller/pkg/localcluster"
)

// inTurns measures the API server's and etcd's CPU milliseconds per
// operation of each of names, rounds times, the names taking turns (each
// round starts one later): do(k, r) runs round r of names[k], n operations.
// Each measure runs from the first operation until the server is quiet, less
// the idle rate of the 5 s before. Each round's figure goes to stderr, per
// unit ("write", "create").
func inTurns(ctx context.Context, cluster *localcluster.Cluster, names []string, rounds, n int, unit string, do func(k, r int) error) (map[string][]float64, error) {
	pids := []int{cluster.Pid("kube-apiserver"), cluster.Pid("etcd")}
	per := map[string][]float64{}
	order := make([]int, len(names))
	for k := range order {
		order[k] = k
	}
	for r := range rounds {
		for _, k := range order {
			quiet(ctx, cluster)
			idleFrom, idleStart := cpuOf(pids...), time.Now()
			time.Sleep(5 * time.Second)
			idle := (cpuOf(pids...) - idleFrom) / time.Since(idleStart).Seconds()
			before, start := cpuOf(pids...), time.Now()
			if err := do(k, r); err != nil {
				return nil, fmt.Errorf("%s: %w", names[k], err)
			}
			quiet(ctx, cluster)
			ms := (cpuOf(pids...) - before - idle*time.Since(start).Seconds()) * 1000 / float64(n)
			per[names[k]] = append(per[names[k]], ms)
			fmt.Fprintf(os.Stderr, "round %d %s: %.3f ms/%s\n", r, names[k], ms, unit)
		}
		order = append(order[1:], order[0])
	}
	return per, nil
}

// printMedians writes to out a Markdown table, its first two columns'
// headings given: each name, the median of its figures, and the figures.
func printMedians(out io.Writer, what, figure string, names []string, per map[string][]float64) {
	fmt.Fprintf(out, "| %s | %s | rounds |\n|---|---|---|\n", what, figure)
	for _, name := range names {
		runs := make([]string, len(per[name]))
		for i, x := range per[name] {
			runs[i] = strconv.FormatFloat(x, 'f', 2, 64)
		}
		fmt.Fprintf(out, "| %s | %.2f | %s |\n", name, middle(slices.Sorted(slices.Values(per[name]))), strings.Join(runs, ", "))
	}
}
