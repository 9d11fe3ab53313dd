package shell

import "path"

// LookPath says whether the container has the program argv0 names
// ("cat", "/bin/sh"): one of the shell's own or one its image adds. A
// runtime asks before it starts an exec, since exec(2) of a file that is
// not there fails before any process runs (containerd: "executable
// file not found in $PATH"), unlike a shell's "sh: x: not found", 127.
func (p *Process) LookPath(argv0 string) bool {
	name := path.Base(argv0)
	if _, ok := p.programs[name]; ok {
		return true
	}
	_, ok := programs[name]
	return ok
}
