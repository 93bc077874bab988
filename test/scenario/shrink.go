package scenario

// Shrink reduces a sequence that fails to a smaller one that still fails,
// by delta debugging over the action list: it drops ever smaller chunks
// while the failure stays, then single actions, until no single action can
// go. fails must be deterministic (replay from scratch each time); it is
// called O(n²) times in the worst case. The result is 1-minimal: removing
// any one of its actions makes it pass. A sequence that does not fail is
// returned as it is.
func Shrink(seq []Action, fails func([]Action) bool) []Action {
	if !fails(seq) {
		return seq
	}
	cur := append([]Action(nil), seq...)
	for chunks := 2; len(cur) >= 2; {
		size := (len(cur) + chunks - 1) / chunks
		removed := false
		for start := 0; start < len(cur); start += size {
			end := min(start+size, len(cur))
			try := append(append([]Action(nil), cur[:start]...), cur[end:]...)
			if len(try) > 0 && fails(try) {
				cur, removed = try, true
				chunks = max2(chunks-1, 2)
				break
			}
		}
		if removed {
			continue
		}
		if size == 1 {
			break
		}
		chunks = min(chunks*2, len(cur))
	}
	return cur
}
