package main

import (
	"errors"
	"fmt"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// The informer caches live as long as the process; the controllers that
// read them live for one term: from acquiring the Lease to losing it (or,
// without leader election, for the whole run). A replica that loses its
// Lease stops its controllers, and the next term builds new ones on the same
// warm caches, as a restarted process would on cold ones, without the
// relist. So the caches' shape (slim transforms, indexes) is set once,
// before the informers start, and each controller only attaches its event
// handlers, and detaches them when its term ends.

// prepareCaches sets what the CronJob controller needs of the Job and
// CronJob informers: their slim forms and its indexes. Once per informer,
// before it starts.
func prepareCaches(jobs, cronJobs cache.SharedIndexInformer) error {
	// The caches hold every Job and CronJob of the cluster for the life of
	// the process: keep them in their slim forms.
	if err := jobs.SetTransform(slim.FromJob); err != nil {
		return fmt.Errorf("setting the Job transform: %w", err)
	}
	if err := cronJobs.SetTransform(slim.FromCronJob); err != nil {
		return fmt.Errorf("setting the CronJob transform: %w", err)
	}
	if err := jobs.AddIndexers(cache.Indexers{jobsByControllerUID: indexByControllerUID, jobsByRecordOf: indexByRecordOf}); err != nil {
		return fmt.Errorf("adding the Job index: %w", err)
	}
	if err := cronJobs.AddIndexers(cache.Indexers{cronJobsByCalendar: indexByCalendar}); err != nil {
		return fmt.Errorf("adding the CronJob index by Calendar: %w", err)
	}
	return nil
}

// prepareBackfillCaches adds the Backfill controller's indexes, once per
// informer, after prepareCaches.
func prepareBackfillCaches(jobs, backfills cache.SharedIndexInformer) error {
	if err := backfills.AddIndexers(cache.Indexers{backfillsByCronJob: indexByCronJobName}); err != nil {
		return fmt.Errorf("adding the Backfill index: %w", err)
	}
	if err := jobs.AddIndexers(cache.Indexers{jobsByBackfill: indexByBackfill}); err != nil {
		return fmt.Errorf("adding the Job index by Backfill: %w", err)
	}
	return nil
}

// attachments are the event handlers one controller added to the shared
// informers, so that it can take them off when its term ends.
type attachments []attachment

type attachment struct {
	informer     cache.SharedIndexInformer
	registration cache.ResourceEventHandlerRegistration
}

// add attaches h to informer. Added to an informer already running, h is
// first handed every object in the cache, as an add.
func (a *attachments) add(informer cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
	reg, err := informer.AddEventHandler(h)
	if err != nil {
		return err
	}
	*a = append(*a, attachment{informer, reg})
	return nil
}

// detach takes every handler off: no event reaches the controller after.
func (a *attachments) detach() error {
	var errs []error
	for _, at := range *a {
		errs = append(errs, at.informer.RemoveEventHandler(at.registration))
	}
	*a = nil
	return errors.Join(errs...)
}

// drain empties a queue shut down at the end of a term: the items no worker
// took would stay counted in its workqueue_depth for the life of the
// process, and the next term's queue counts them again.
func drain(q workqueue.TypedInterface[cache.ObjectName]) {
	for q.Len() > 0 {
		key, _ := q.Get()
		q.Done(key)
	}
}
