package inspect

import (
	"fmt"
	"strings"
)

// barWidth is the number of cells of a progress bar.
const barWidth = 30

// progressLine is "label n/total", with a bar between them on a terminal.
func progressLine(label string, n, total int32, terminal bool) string {
	if !terminal {
		return fmt.Sprintf("  %s:\t%d/%d", label, n, total)
	}
	return fmt.Sprintf("  %s\t%s %d/%d", label, bar(n, total), n, total)
}

// bar is a progress bar of n out of total; nothing to do is done.
func bar(n, total int32) string {
	filled := barWidth
	if total > 0 {
		filled = int(min(max(n, 0), total)) * barWidth / int(total)
	}
	return "[" + strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled) + "]"
}
