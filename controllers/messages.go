package controllers

import (
	"fmt"
	"strings"
)

// maxConditionMessage keeps condition messages readable and far below the
// API server's limit of 32768 bytes, even when thousands of nodes have
// something to say.
const maxConditionMessage = 1024

// truncate shortens s to at most n bytes, saying how much was cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := fmt.Sprintf(" ... (%d more bytes)", len(s)-n)
	// Cutting inside a multi-byte character would leave invalid UTF-8.
	return strings.ToValidUTF8(s[:max(0, n-len(cut))], "") + cut
}
