package envvars

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The cases are the rules the API documents for env[].value, command and
// args, and what Kubernetes' expansion does at the edges.
func TestExpandVars(t *testing.T) {
	vars := map[string]string{"VAR_A": "A", "VAR_B": "B", "EMPTY": "", "DOLLAR": "$"}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"text without a $ is unchanged", "hello", "hello"},
		{"a defined variable is replaced by its value", "$(VAR_A)", "A"},
		{"references expand within text", "___$(VAR_B)___", "___B___"},
		{"several references expand in one value", "$(VAR_A)-$(VAR_B)", "A-B"},
		{"a variable defined as empty expands to nothing", "x$(EMPTY)y", "xy"},
		{"an undefined variable stays as written", "$(UNDEFINED)", "$(UNDEFINED)"},
		{"an undefined variable stays amid defined ones", "$(VAR_A)$(NOPE)$(VAR_B)", "A$(NOPE)B"},
		{"$$ escapes a reference, which is then never expanded", "$$(VAR_A)", "$(VAR_A)"},
		{"$$ escapes an undefined reference too", "$$(UNDEFINED)", "$(UNDEFINED)"},
		{"$$$ is a literal $ then a reference", "$$$(VAR_A)", "$A"},
		{"$$$$ is two literal $", "$$$$(VAR_A)", "$$(VAR_A)"},
		{"a lone $$ is one $", "a$$b", "a$b"},
		{"shell syntax is left for the shell", "echo $HOME ${HOME}", "echo $HOME ${HOME}"},
		{"a trailing $ is kept", "cost: 5$", "cost: 5$"},
		{"an unclosed reference is kept", "$(VAR_A", "$(VAR_A"},
		{"an unclosed reference keeps what follows readable", "$(x $(VAR_A)", "$(x $(VAR_A)"},
		{"an empty reference stays as written", "$()", "$()"},
		{"a name ends at the first closing parenthesis", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"},
		{"a value's own $ is not expanded again", "$(DOLLAR)(VAR_A)", "$(VAR_A)"},
		{"a $ before an ordinary character is kept", "$a$(VAR_A)", "$aA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Expand(tc.in, lookupIn(vars)); got != tc.want {
				t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestLookupInPrefersTheFirstMap(t *testing.T) {
	lookup := lookupIn(map[string]string{"A": "container"}, map[string]string{"A": "service", "B": "service"})
	for name, want := range map[string]string{"A": "container", "B": "service"} {
		if got, ok := lookup(name); !ok || got != want {
			t.Errorf("lookup(%s) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if _, ok := lookup("C"); ok {
		t.Error("lookup(C) found a variable nobody defined")
	}
}

func TestExpandArgsUsesTheFinalEnvironment(t *testing.T) {
	env := []corev1.EnvVar{{Name: "SPECIAL_LEVEL_KEY", Value: "very"}, {Name: "KUBERNETES_SERVICE_HOST", Value: "10.96.0.1"}}
	got := ExpandArgs([]string{"echo $(SPECIAL_LEVEL_KEY) $(KUBERNETES_SERVICE_HOST)", "$$(SPECIAL_LEVEL_KEY)", "$(MISSING)"}, env)
	want := []string{"echo very 10.96.0.1", "$(SPECIAL_LEVEL_KEY)", "$(MISSING)"}
	if !slices.Equal(got, want) {
		t.Errorf("expandArgs = %q, want %q", got, want)
	}
	if got := ExpandArgs(nil, env); got != nil {
		t.Errorf("ExpandArgs(nil) = %q, want nil: no command means the image's", got)
	}
}
