package charts

import "embed"

// FS holds each chart's directory at its top level (mysql/Chart.yaml...).
// "all:" keeps the files whose names start with "_", as
// templates/_helpers.tpl, which embed would otherwise leave out.
//
//go:embed all:mysql all:nginx all:guestbook
var FS embed.FS
