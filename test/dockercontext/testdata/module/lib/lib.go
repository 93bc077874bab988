// Package lib embeds a query.
package lib

import _ "embed"

// Query is read from a file the build embeds.
//
//go:embed queries/up.txt
var Query string
