package schedule

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
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

// Resolve replaces every H in spec with the value hashed from seed (the
// CronJob's namespace/name). Specs without H come back unchanged.
func Resolve(spec, seed string) (string, error) {
	if !strings.Contains(spec, "H") {
		return spec, nil
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return "", invalidSchedule("schedule %q: H needs the five-field form", spec)
	}
	for i, field := range fields {
		if !strings.Contains(field, "H") {
			continue
		}
		parts := strings.Split(field, ",")
		for j, part := range parts {
			if !strings.Contains(part, "H") {
				continue
			}
			resolved, err := resolvePart(part, i, hashOf(seed, i, j))
			if err != nil {
				return "", invalidSchedule("schedule %q: %s field %q: %v", spec, fieldRanges[i].name, part, err)
			}
			parts[j] = resolved
		}
		fields[i] = strings.Join(parts, ",")
	}
	return strings.Join(fields, " "), nil
}

func hashOf(seed string, field, part int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%d", seed, field, part)
	return h.Sum64()
}

// resolvePart turns one H form into plain cron syntax.
func resolvePart(part string, field int, hash uint64) (string, error) {
	lo, hi := fieldRanges[field].min, fieldRanges[field].max
	rest, ok := strings.CutPrefix(part, "H")
	if !ok {
		return "", fmt.Errorf("H must start the expression")
	}
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
			return "", fmt.Errorf("range start: %v", err)
		}
		if hi, err = strconv.Atoi(b); err != nil {
			return "", fmt.Errorf("range end: %v", err)
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
		return "", fmt.Errorf("unexpected %q after H", rest)
	}
	step, err := strconv.Atoi(stepText)
	if err != nil || step < 1 || step > hi-lo+1 {
		return "", fmt.Errorf("step %q must be a number from 1 to %d", stepText, hi-lo+1)
	}
	start := lo + int(hash%uint64(step))
	return fmt.Sprintf("%d-%d/%d", start, hi, step), nil
}
