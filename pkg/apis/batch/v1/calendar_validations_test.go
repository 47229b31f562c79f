package v1

import (
	"os"
	"strings"
	"testing"

	"github.com/cronjob-controller/cronjob-controller/pkg/schedule"
)

// A Calendar's spec.timeZone has the shape rule of a CronJob's, verbatim.
func TestCalendarTimeZoneRuleIsTheCronJobs(t *testing.T) {
	src, err := os.ReadFile("calendar_types.go")
	if err != nil {
		t.Fatal(err)
	}
	if rule := "rule=`self.matches(r'" + schedule.TimeZoneRE + "')`"; !strings.Contains(string(src), rule) {
		t.Errorf("CalendarSpec.TimeZone lacks the rule %s", rule)
	}
}
