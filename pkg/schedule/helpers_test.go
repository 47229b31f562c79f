package schedule

import batchv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"

func newCronJob() *batchv1.CronJob {
	return &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
}
