package fluxevents

import (
	"fmt"
	"io"
	"strings"
)

// Detail is the part of an event's note that may change from one telling
// of a transition to the next: a restart count, a measured value, the API
// server's words. As an argument of Eventf it formats, whatever the verb,
// as ": " and its text in the Kubernetes event (nothing when empty), and
// as nothing in the Flux event's message, which carries it as metadata
// (MetadataDetail) instead, so that the notification-controller's rate
// limiting sees the same message each time.
type Detail string

// Format writes ": " and the text, or nothing for an empty Detail.
func (d Detail) Format(f fmt.State, _ rune) {
	if d != "" {
		_, _ = io.WriteString(f, ": "+string(d))
	}
}

// elided stands for a Detail in the Flux event's message.
type elided struct{}

func (elided) Format(fmt.State, rune) {}

// splitDetails formats the note twice: as the Kubernetes event shows it,
// and without its Details, which it returns joined.
func splitDetails(note string, args []any) (stable, details string) {
	stableArgs := make([]any, len(args))
	var ds []string
	for i, a := range args {
		if d, ok := a.(Detail); ok {
			stableArgs[i] = elided{}
			if d != "" {
				ds = append(ds, string(d))
			}
			continue
		}
		stableArgs[i] = a
	}
	return fmt.Sprintf(note, stableArgs...), strings.Join(ds, "; ")
}
