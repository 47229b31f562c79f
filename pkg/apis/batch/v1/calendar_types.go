package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CEL rules rather than a pattern, as for ConcurrencyPolicy: one failed rule
// is one error line. The maximum lengths, there to bound the rules' cost,
// are loose for the same reason: a mistake such as an offset or fractional
// seconds meets a rule, not the length. The second rule refuses days a month does not have
// (February 29 only in leap years); it holds vacuously for a value of the
// wrong shape, which the first rule reports.

// CalendarDate is a day, YYYY-MM-DD, read in the Calendar's time zone; the
// API server refuses a day the month does not have. At most 64 characters.
//
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule=`self.matches('^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$')`,message=`must be a date YYYY-MM-DD`
// +kubebuilder:validation:XValidation:rule=`!self.matches('^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$') || int(self.substring(8, 10)) <= (self.substring(5, 7) in ['04', '06', '09', '11'] ? 30 : self.substring(5, 7) != '02' ? 31 : (int(self.substring(0, 4)) % 4 == 0 && (int(self.substring(0, 4)) % 100 != 0 || int(self.substring(0, 4)) % 400 == 0)) ? 29 : 28)`,message=`is not a day of that month`
type CalendarDate string

// CalendarTime is a day (YYYY-MM-DD) or a wall-clock time on a day
// (YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS, no offset), read in the
// Calendar's time zone.
//
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule=`self.matches('^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?)?$')`,message=`must be a date YYYY-MM-DD or a time YYYY-MM-DDTHH:MM[:SS] without offset (the Calendar's spec.timeZone applies)`
// +kubebuilder:validation:XValidation:rule=`!self.matches('^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])') || int(self.substring(8, 10)) <= (self.substring(5, 7) in ['04', '06', '09', '11'] ? 30 : self.substring(5, 7) != '02' ? 31 : (int(self.substring(0, 4)) % 4 == 0 && (int(self.substring(0, 4)) % 100 != 0 || int(self.substring(0, 4)) % 400 == 0)) ? 29 : 28)`,message=`is not a day of that month`
type CalendarTime string

// CalendarRange is a stretch of time when no run starts, from start to end
// in the Calendar's time zone. A date as start means the start of that day;
// a date as end means the end of that day: the day is excluded too. A time
// as end is exclusive: a run due exactly then starts. So start 2026-12-24,
// end 2027-01-01 excludes nine whole days; start 2026-12-24T18:00, end
// 2026-12-28T08:00 excludes 18:00 of the first day up to, not including,
// 08:00 of the last.
//
// +kubebuilder:validation:XValidation:rule=`size(self.start) < 10 || size(self.end) < 10 || (size(self.end) == 10 ? self.start.substring(0, 10) <= self.end : self.start < self.end)`,message=`start must not be after end`
type CalendarRange struct {
	// Start is the first day (YYYY-MM-DD) or time (YYYY-MM-DDTHH:MM[:SS])
	// excluded.
	// At most 64 characters.
	Start CalendarTime `json:"start"`
	// End is the last day excluded (YYYY-MM-DD), or the time the range ends
	// (YYYY-MM-DDTHH:MM[:SS], not itself excluded).
	// At most 64 characters.
	End CalendarTime `json:"end"`
}

// CalendarSpec lists the days and stretches of time when the CronJobs that
// name the Calendar start no run.
type CalendarSpec struct {
	// TimeZone is the IANA name of the zone the dates and ranges are read
	// in; UTC when unset. A scheduled time is excluded when, read in this
	// zone, it falls on a date or within a range, whatever the CronJob's own
	// time zone. The API server refuses a name of the wrong shape; the
	// controller reports one missing from its time zone database on the
	// CronJobs that name the Calendar.
	// At most 255 characters.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:default=UTC
	// +optional
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^(?i)local$')`,message=`must name an IANA time zone such as Europe/Berlin: a Calendar means the same days wherever the controller runs`
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^(?:[A-Za-z_0-9+][A-Za-z.\-_0-9+]{0,13}|\.[A-Za-z\-_0-9+][A-Za-z.\-_0-9+]{0,12}|\.\.[A-Za-z.\-_0-9+]{1,12})(?:/(?:[A-Za-z_0-9+][A-Za-z.\-_0-9+]{0,13}|\.[A-Za-z\-_0-9+][A-Za-z.\-_0-9+]{0,12}|\.\.[A-Za-z.\-_0-9+]{1,12}))*$')`,message=`not an IANA time zone name: each /-separated part is 1 to 14 of A-Z a-z 0-9 . - _ +, not . or .., not starting with -`
	TimeZone string `json:"timeZone,omitempty"`

	// Dates are whole days (YYYY-MM-DD) when no run starts: from 00:00 of
	// the day to 00:00 of the next, in timeZone.
	// At most 1000 dates, each at most 64 characters.
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Dates []CalendarDate `json:"dates,omitempty"`

	// Ranges are stretches of time when no run starts; see CalendarRange
	// for how start and end are read.
	// At most 200 ranges.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=200
	// +optional
	Ranges []CalendarRange `json:"ranges,omitempty"`
}

// Calendar lists dates and date ranges, in its own time zone, when the
// CronJobs naming it in spec.excludeCalendars start no run: holidays,
// freeze windows. A time it excludes is counted in the CronJob's
// status.missedRuns under Excluded; it is not a failure and is never owed
// later. An edit takes effect at the next due time of each CronJob naming
// it.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=calendars,singular=calendar,scope=Cluster,shortName=tcal,categories=tutorial
// +kubebuilder:printcolumn:name="Timezone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Dates",type=string,JSONPath=`.spec.dates`
// +kubebuilder:printcolumn:name="Ranges",type=string,JSONPath=`.spec.ranges`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Calendar struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec CalendarSpec `json:"spec"`
}

// CalendarList is a list of Calendars.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type CalendarList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Calendar `json:"items"`
}
