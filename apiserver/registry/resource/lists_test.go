package resource

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateSetRefusesTooManyAloneThenChecksEachItemAndDuplicates(t *testing.T) {
	calls := 0
	item := func(s string, p *field.Path) field.ErrorList {
		calls++
		if s == "" {
			return field.ErrorList{field.Required(p, "")}
		}
		return nil
	}
	key := func(s string) string { return s }
	path := field.NewPath("names")
	for _, tc := range []struct {
		items []string
		want  string // the errors, in order
		calls int
	}{
		{[]string{"a", "b", "c"}, "names: Too many: 3: must have at most 2 items", 0},
		{[]string{"a", "a"}, `names[1]: Duplicate value: "a"`, 2},
		{[]string{"", "b"}, "names[0]: Required value", 2},
	} {
		calls = 0
		errs := validateSet(tc.items, 2, key, item, path)
		if got := errs.ToAggregate(); got == nil || got.Error() != tc.want || calls != tc.calls {
			t.Errorf("%v: %v after %d item checks, want %s after %d", tc.items, got, calls, tc.want, tc.calls)
		}
	}
}
