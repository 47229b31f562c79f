package schedule

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Jenkins-style H: in any of the five fields, "H" stands for one value
// chosen by a stable hash of the CronJob's namespace/name, so a fleet
// written as "H * * * *" spreads over the hour while each CronJob keeps its
// own minute forever. Forms: H, H(a-b), H/n, H(a-b)/n, also inside lists.

// fieldRanges are the values H may take per field. Days of the month stop at
// 28 so that a hashed day exists in every month.
var fieldRanges = [5]struct {
	name     string
	min, max int
}{{"minute", 0, 59}, {"hour", 0, 23}, {"day of month", 1, 28}, {"month", 1, 12}, {"day of week", 0, 6}}

// MaxScheduleLength is the most characters spec.schedule may have, as
// the schema's MaxLength on CronJobSpec.Schedule says.
const MaxScheduleLength = 1024

// Resolve replaces every H in spec with the value hashed from seed (the
// CronJob's namespace/name). Specs without an H form come back unchanged,
// byte for byte, for the cron parser to judge.
//
// A spec longer than MaxScheduleLength is refused, H or not: the schema
// caps spec.schedule, but an object from before the cap, or one written
// past validation, can hold a valid schedule of a megabyte, and the
// controller copies what Resolve returns into status.resolvedSchedule,
// which would then double the object past what etcd stores and fail every
// status write. Characters are counted as the API server counts them.
func Resolve(spec, seed string) (string, error) {
	if len(spec) > MaxScheduleLength {
		if n := utf8.RuneCountInString(spec); n > MaxScheduleLength {
			return "", invalidSchedule("schedule %s: spec.schedule takes at most %d characters", quote(spec), MaxScheduleLength)
		}
	}
	// Most schedules hold no capital H at all; they cost no allocation.
	if !strings.Contains(spec, "H") {
		return spec, nil
	}
	// cron splits fields on any whitespace and list elements on commas;
	// an H form is recognised on those same tokens, never inside one.
	fields := strings.Fields(spec)
	elements := make([][]string, len(fields))
	found := false
	for i, field := range fields {
		elements[i] = strings.Split(field, ",")
		for _, element := range elements[i] {
			found = found || isHForm(element)
		}
	}
	if !found {
		return spec, nil
	}
	if len(fields) != 5 {
		return "", invalidSchedule("schedule %s: H needs the five-field form", quote(spec))
	}
	for i, parts := range elements {
		for j, part := range parts {
			if !isHForm(part) {
				continue
			}
			resolved, err := resolvePart(part, i, hashOf(seed, i, j))
			if err != nil {
				return "", invalidSchedule("schedule %s: %s field %s: %v", quote(spec), fieldRanges[i].name, quote(part), err)
			}
			parts[j] = resolved
		}
		fields[i] = strings.Join(parts, ",")
	}
	return strings.Join(fields, " "), nil
}

// isHForm reports whether a list element is one of ours: an H at its start
// followed by nothing, "(" or "/". Any other capital H is cron's to judge:
// the day name THU (cron reads names in any case, so also tHu), a
// descriptor such as @HOURLY, a zone in TZ=, or typos like Hx and H-5,
// which cron then refuses with its own message. A lowercase h is never an
// H form, as in Jenkins; no cron name starts with h, so cron refuses it.
func isHForm(element string) bool {
	rest, ok := strings.CutPrefix(element, "H")
	return ok && (rest == "" || rest[0] == '(' || rest[0] == '/')
}

func hashOf(seed string, field, part int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%d", seed, field, part)
	return h.Sum64()
}

// resolvePart turns one H form (isHForm) into plain cron syntax. Its errors
// quote nothing: Resolve quotes the part, bounded, around them.
func resolvePart(part string, field int, hash uint64) (string, error) {
	lo, hi := fieldRanges[field].min, fieldRanges[field].max
	rest := part[1:] // isHForm: part starts with H
	if strings.HasPrefix(rest, "(") {
		end := strings.Index(rest, ")")
		if end < 0 {
			return "", fmt.Errorf("unclosed H(")
		}
		a, b, found := strings.Cut(rest[1:end], "-")
		if !found {
			return "", fmt.Errorf("H(a-b) needs a range")
		}
		var err error
		if lo, err = strconv.Atoi(a); err != nil {
			return "", errors.New("the range start is not a number")
		}
		if hi, err = strconv.Atoi(b); err != nil {
			return "", errors.New("the range end is not a number")
		}
		if lo > hi || lo < fieldRanges[field].min || hi > fieldRanges[field].max {
			return "", fmt.Errorf("range %d-%d outside %d-%d", lo, hi, fieldRanges[field].min, fieldRanges[field].max)
		}
		rest = rest[end+1:]
	}
	if rest == "" {
		return strconv.Itoa(lo + int(hash%uint64(hi-lo+1))), nil
	}
	stepText, ok := strings.CutPrefix(rest, "/")
	if !ok {
		return "", errors.New("unexpected text after H(a-b)")
	}
	step, err := strconv.Atoi(stepText)
	if err != nil || step < 1 || step > hi-lo+1 {
		return "", fmt.Errorf("the step must be a number from 1 to %d", hi-lo+1)
	}
	start := lo + int(hash%uint64(step))
	return fmt.Sprintf("%d-%d/%d", start, hi, step), nil
}
