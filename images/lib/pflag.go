package lib

import (
	"strconv"
	"strings"
)

// StringFlag is --name=value or --name value among a program's flags
// (pflag takes both), the last one given, or def.
func StringFlag(args []string, name, def string) string {
	v := def
	for i, a := range args {
		if value, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			v = value
		} else if a == "--"+name && i+1 < len(args) {
			v = args[i+1]
		}
	}
	return v
}

// BoolFlag is pflag's boolean --name (true) or --name=value, the last
// one given, or def.
func BoolFlag(args []string, name string, def bool) bool {
	v := def
	for _, a := range args {
		if a == "--"+name {
			v = true
		} else if value, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			if b, err := strconv.ParseBool(value); err == nil {
				v = b
			}
		}
	}
	return v
}

// IntFlag is an integer StringFlag, or def.
func IntFlag(args []string, name string, def int) int {
	if n, err := strconv.Atoi(StringFlag(args, name, strconv.Itoa(def))); err == nil {
		return n
	}
	return def
}
