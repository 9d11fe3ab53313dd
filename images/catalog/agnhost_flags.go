package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// agnhost's subcommands are cobra commands whose flags pflag parses,
// with component-base's cli.Run around them: it normalizes every flag
// name with WordSepNormalizeFunc ("_" is "-", so --file_mode and
// --file-mode are one flag, and errors name it --file-mode) and prints
// a failure as "Error: <what pflag says>" on stderr, exit status 1.
// (cobra prints the command's usage before a flag error; that block is
// not simulated.)

// flagKind is how a flag takes its value.
type flagKind int

const (
	stringFlagKind flagKind = iota
	intFlagKind             // pflag's IntVar: strconv.ParseInt(s, 0, 64)
	boolFlagKind            // --name is true; a value only as --name=false
)

// agnhostGlobalFlags are the persistent flags cli.Run adds (klog's), which
// every subcommand accepts.
var agnhostGlobalFlags = map[string]flagKind{"log-flush-frequency": stringFlagKind, "v": stringFlagKind, "vmodule": stringFlagKind}

// parseFlags reads args by kinds (normalized names) as pflag does:
// --name=value, --name value (not for a bool), and everything after
// "--" or that is not a flag is positional. values has the last value
// of each flag given, by normalized name.
func parseFlags(args []string, kinds map[string]flagKind) (values map[string]string, positional []string, err error) {
	values = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return values, append(positional, args[i+1:]...), nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			positional = append(positional, a)
			continue
		case !strings.HasPrefix(a, "--"):
			switch {
			case a == "-v" && i+1 < len(args): // klog's -v N, the one shorthand
				i++
				continue
			case strings.HasPrefix(a, "-v") && len(a) > 2: // -v=2, -v2
				continue
			}
			return nil, nil, fmt.Errorf("unknown shorthand flag: %q in %s", rune(a[1]), a)
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		norm := strings.ReplaceAll(name, "_", "-")
		kind, ok := kinds[norm]
		if !ok {
			kind, ok = agnhostGlobalFlags[norm]
		}
		if !ok {
			return nil, nil, fmt.Errorf("unknown flag: --%s", name)
		}
		switch {
		case !hasValue && kind == boolFlagKind:
			value = "true"
		case !hasValue && i+1 < len(args):
			i++
			value = args[i]
		case !hasValue:
			return nil, nil, fmt.Errorf("flag needs an argument: --%s", name)
		}
		if err := checkFlagValue(kind, value); err != nil {
			return nil, nil, fmt.Errorf("invalid argument %q for %q flag: %w", value, "--"+norm, err)
		}
		values[norm] = value
	}
	return values, positional, nil
}

// checkFlagValue is the parse error pflag reports for a value.
func checkFlagValue(kind flagKind, value string) error {
	var err error
	switch kind {
	case intFlagKind:
		_, err = strconv.ParseInt(value, 0, 64)
	case boolFlagKind:
		_, err = strconv.ParseBool(value)
	}
	return err
}
