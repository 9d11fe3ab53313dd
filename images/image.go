package images

import "github.com/mkube/mkube/images/catalog"

// What the runtime gets from an image: its manifest and layers, as far as
// a simulated container can tell, and whether a pull of it succeeds.

// Image is what an image gives its containers: its configuration
// (ENTRYPOINT, CMD, ENV, WORKDIR, EXPOSE, STOPSIGNAL), the files of its
// layers that matter, its own programs, and the servers that answer
// connections to the ports those programs listen on. It is the catalog's
// type, not a copy of it.
type Image = catalog.Image

// Lookup is what the image ref holds, ref normalized as containerd names
// images ("docker.io/library/nginx:1.25"). An image the catalog does not
// know is Known=false, with a stand-in program that runs until stopped.
func Lookup(ref string) Image { return catalog.Lookup(ref) }

// Size is how much ref weighs on a real node, or 0 for an unknown image.
func Size(ref string) uint64 { return catalog.Size(ref) }

// PullError says why pulling ref fails, in containerd's words, or nil.
func PullError(ref string) error { return catalog.PullError(ref) }

// ErrNotFound is what PullError wraps for a tag that does not exist.
var ErrNotFound = catalog.ErrNotFound
