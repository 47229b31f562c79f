package schedule

import "time"

// LoadLocation resolves an IANA zone name as spec.timeZone is resolved
// (cached, shape checked first), for the time zones of other kinds: a
// Calendar's.
func LoadLocation(name string) (*time.Location, error) { return loadLocation(&name) }
