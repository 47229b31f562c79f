package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions/batch/v1"
	"github.com/cronjob-controller/cronjob-controller/pkg/slim"
)

// cronJobsByCalendar indexes CronJobs by the Calendars they name in
// spec.excludeCalendars, so a Calendar's change queues exactly its CronJobs.
const cronJobsByCalendar = "cronJobsByCalendar"

// indexByCalendar keys a CronJob (slim or whole) by each Calendar it names.
func indexByCalendar(obj any) ([]string, error) {
	switch cj := obj.(type) {
	case *slim.CronJob:
		return cj.ExcludeCalendars(), nil
	case *cronv1.CronJob:
		return cj.Spec.ExcludeCalendars, nil
	}
	return nil, nil
}

// WithCalendars makes the controller read exclusion Calendars from
// informer. Without it every CronJob naming a Calendar finds it missing,
// and holds its runs.
func WithCalendars(informer informers.CalendarInformer) Option {
	return func(c *Controller) { c.calendarInformer = informer }
}

// watchCalendars wires the Calendar informer, if any: its cache answers
// view, and a Calendar added, changed or deleted queues the CronJobs that
// name it, so an edit takes effect at their next due time (a sync settles
// the times before it, and decides the rest under the new Calendar).
func (c *Controller) watchCalendars() error {
	if c.calendarInformer == nil {
		return nil
	}
	informer := c.calendarInformer.Informer()
	c.calendarIndexer = informer.GetIndexer()
	c.cachesSynced = append(c.cachesSynced, informer.HasSynced)
	err := c.handlers.add(informer, cache.ResourceEventHandlerFuncs{
		AddFunc:    c.calendarChanged,
		UpdateFunc: c.updateCalendar,
		DeleteFunc: c.deleteCalendar,
	})
	if err != nil {
		return fmt.Errorf("adding Calendar handlers: %w", err)
	}
	return nil
}

// updateCalendar queues the CronJobs of a Calendar that really changed; a
// periodic resync changes nothing.
func (c *Controller) updateCalendar(oldObj, newObj any) {
	o, ok1 := oldObj.(metav1.Object)
	n, ok2 := newObj.(metav1.Object)
	if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
		return
	}
	c.calendarChanged(newObj)
}

// deleteCalendar drops a deleted Calendar (or its tombstone) from the
// parsed cache and queues the CronJobs that named it.
func (c *Controller) deleteCalendar(obj any) {
	if key, err := cache.DeletionHandlingObjectToName(obj); err == nil {
		c.calendarCache.Forget(key.Name)
	}
	c.calendarChanged(obj)
}

// calendarChanged queues the CronJobs that name a Calendar (or its
// tombstone).
func (c *Controller) calendarChanged(obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	cronJobs, err := c.cronJobIndexer.ByIndex(cronJobsByCalendar, key.Name)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("listing the CronJobs of Calendar %s: %w", key.Name, err))
		return
	}
	for _, cj := range cronJobs {
		c.enqueueCronJob(cj)
	}
}

// calendarsOf returns the Calendars cj names, by name, as the cache holds
// them; a name missing from the result was not found, and is dropped from
// the parsed cache (a sync racing the delete event may have put it back).
// They are the cache's objects: read them, never change them.
func (c *Controller) calendarsOf(cj *cronv1.CronJob) map[string]*cronv1.Calendar {
	if len(cj.Spec.ExcludeCalendars) == 0 || c.calendarIndexer == nil {
		return nil
	}
	found := make(map[string]*cronv1.Calendar, len(cj.Spec.ExcludeCalendars))
	for _, name := range cj.Spec.ExcludeCalendars {
		obj, exists, err := c.calendarIndexer.GetByKey(name)
		if err != nil {
			continue
		}
		if !exists {
			c.calendarCache.Forget(name)
			continue
		}
		if cal, ok := obj.(*cronv1.Calendar); ok {
			found[name] = cal
		}
	}
	return found
}
