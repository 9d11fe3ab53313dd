package lib

import (
	"context"

	"github.com/mkube/mkube/images/shell"
)

// ListenUntilStopped holds a server's ports open until its stop signal arrives (nil)
// or it is killed (ctx's error, which the program returns with 137).
func ListenUntilStopped(ctx context.Context, p *shell.Process, ports ...int32) error {
	for _, port := range ports {
		p.Listen(port)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.Terminated():
		return nil
	}
}
