package kubelet

import "github.com/mkube/mkube/kubelet/envvars"

// The names other files of this package (objects.go, volumesources.go,
// subpath.go, criconfig.go) still call what moved to package envvars by;
// they go when those files call the package themselves.
var (
	expandVars      = envvars.Expand     // subpath.go: a subPathExpr
	expandArgs      = envvars.ExpandArgs // criconfig.go: command and args
	isOptional      = envvars.IsOptional // volumesources.go
	kubeletNotFound = envvars.NotFound   // objects.go
)
