package kubelet

import (
	"github.com/mkube/mkube/kubelet/envvars"
	"github.com/mkube/mkube/kubelet/prober"
)

// The names other files of this package (objects.go, volumesources.go,
// subpath.go, criconfig.go, lifecyclehooks.go) still call what moved to
// packages envvars and prober by; they go when those files call the
// packages themselves.
var (
	probePort       = prober.Port        // lifecyclehooks.go: an httpGet hook's port
	expandVars      = envvars.Expand     // subpath.go: a subPathExpr
	expandArgs      = envvars.ExpandArgs // criconfig.go: command and args
	isOptional      = envvars.IsOptional // volumesources.go
	kubeletNotFound = envvars.NotFound   // objects.go
)

const maxProbeBody = prober.MaxBody // lifecyclehooks.go: an httpGet hook's answer read
