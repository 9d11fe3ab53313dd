package batch

import (
	"fmt"
	"strconv"
	"strings"
)

// An Indexed Job lists indexes as ordered, comma-separated intervals:
// "1,3-5,7" is 1, 3, 4, 5 and 7. status.completedIndexes,
// status.failedIndexes and a success policy's succeededIndexes are such
// lists, and every index is below spec.completions.

// validateIndexesFormat parses a list of indexes below completions and
// returns how many it holds.
func validateIndexesFormat(indexes string, completions int32) (int32, error) {
	if indexes == "" {
		return 0, nil
	}
	var total int32
	last := int32(-1)
	for _, s := range strings.Split(indexes, ",") {
		first, end, err := parseIndexInterval(s, completions)
		if err != nil {
			return 0, err
		}
		if last >= first {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, first)
		}
		total += end - first + 1
		last = end
	}
	return total, nil
}

// parseIndexInterval parses "x" or "x-y" (x < y), both below completions.
func parseIndexInterval(s string, completions int32) (int32, int32, error) {
	limits := strings.Split(s, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	var bounds [2]int32
	for i, l := range limits {
		v, err := strconv.Atoi(l)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", l)
		}
		if v >= int(completions) {
			return 0, 0, fmt.Errorf("too large index: %q", l)
		}
		bounds[i] = int32(v)
	}
	if len(limits) == 1 {
		return bounds[0], bounds[0], nil
	}
	if bounds[0] >= bounds[1] {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", bounds[0], bounds[1])
	}
	return bounds[0], bounds[1], nil
}

// failedIndexesOverlapCompleted: an index cannot have both succeeded and
// failed. Intervals that do not parse are skipped: the format check
// reports them.
func failedIndexesOverlapCompleted(completed, failed string, completions int32) error {
	if completed == "" || failed == "" {
		return nil
	}
	parse := func(list string) [][2]int32 {
		var out [][2]int32
		for _, s := range strings.Split(list, ",") {
			if x, y, err := parseIndexInterval(s, completions); err == nil {
				out = append(out, [2]int32{x, y})
			}
		}
		return out
	}
	cs, fs := parse(completed), parse(failed)
	for i, j := 0, 0; i < len(cs) && j < len(fs); {
		c, f := cs[i], fs[j]
		if c[0] <= f[1] && f[0] <= c[1] {
			return fmt.Errorf("failedIndexes and completedIndexes overlap at index: %d", max(c[0], f[0]))
		}
		if c[0] <= f[0] {
			i++
		} else {
			j++
		}
	}
	return nil
}
