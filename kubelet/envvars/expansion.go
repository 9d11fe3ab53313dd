package envvars

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Expand is Kubernetes' $(VAR) expansion, which the kubelet applies
// to env[].value (against the variables defined before it and the
// service variables) and to command and args (against the container's
// final environment). The API documents the rules:
//
//   - $(NAME) becomes NAME's value when NAME is defined;
//   - an undefined $(NAME) is left as written, "$(NAME)";
//   - $$ is one literal $, so "$$(NAME)" is the text "$(NAME)", never
//     expanded, whether NAME exists or not;
//   - any other $ is kept as it is: "$HOME", "${HOME}", "a$", an unclosed
//     "$(NAME".
//
// It is not the shell's syntax: $HOME and ${HOME} are left for a shell in
// the container to expand, which is why `command: [sh, -c, 'echo $HOME']`
// and `args: ['$(HOME)']` both work. A name ends at the first ")", so
// references do not nest.
//
//	Expand("$(A)-$$(A)-$(B)", {A: "x"}) = "x-$(A)-$(B)"
func Expand(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s // the common case: nothing to expand
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$': // an escaped $
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 { // unclosed: kept, and the rest read as text
				b.WriteString("$(")
				i++
				continue
			}
			ref := s[i : i+2+end+1] // "$(NAME)"
			if v, ok := lookup(ref[2 : len(ref)-1]); ok {
				b.WriteString(v)
			} else {
				b.WriteString(ref)
			}
			i += len(ref) - 1
		default: // a $ that starts no reference
			b.WriteByte('$')
		}
	}
	return b.String()
}

// lookupIn looks a name up in maps, the first that has it winning: the
// container's variables before the service ones.
func lookupIn(maps ...map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, m := range maps {
			if v, ok := m[name]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// ExpandArgs is a container's command or args with $(VAR) expanded
// against its final environment (the kubelet's
// ExpandContainerCommandAndArgs): `args: ['echo $(SPECIAL_LEVEL_KEY)']`
// runs `echo very`.
func ExpandArgs(args []string, env []corev1.EnvVar) []string {
	if len(args) == 0 {
		return args
	}
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = Expand(a, lookupIn(vars))
	}
	return out
}
