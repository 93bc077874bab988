package steer

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines surround a change, as diff -u.
const diffContext = 3

// edit is one line of an edit script: kept (' '), removed ('-') or added
// ('+'), with the index of the line of a and of b it stands before.
type edit struct {
	kind byte
	text string
	a, b int
}

// unifiedDiff is the unified diff of the lines of a and b, labelled from
// and to, empty when they are equal. Pod templates are a few hundred lines
// that mostly agree, so a longest common subsequence between their common
// prefix and suffix is small enough to compute in full.
func unifiedDiff(from, to, a, b string) string {
	edits := editScript(lines(a), lines(b))
	var out strings.Builder
	for _, h := range hunks(edits) {
		if out.Len() == 0 {
			fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
		}
		writeHunk(&out, edits[h[0]:h[1]])
	}
	return out.String()
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// editScript turns a into b, keeping a longest common subsequence.
func editScript(a, b []string) []edit {
	prefix := 0
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	midA, midB := a[prefix:len(a)-suffix], b[prefix:len(b)-suffix]
	// lcs[i][j] is the length of the longest common subsequence of
	// midA[i:] and midB[j:].
	lcs := make([][]int, len(midA)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(midB)+1)
	}
	for i := len(midA) - 1; i >= 0; i-- {
		for j := len(midB) - 1; j >= 0; j-- {
			if midA[i] == midB[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	edits := make([]edit, 0, len(a)+len(b))
	for i := range prefix {
		edits = append(edits, edit{' ', a[i], i, i})
	}
	i, j := 0, 0
	for i < len(midA) || j < len(midB) {
		switch {
		case i < len(midA) && j < len(midB) && midA[i] == midB[j]:
			edits = append(edits, edit{' ', midA[i], prefix + i, prefix + j})
			i, j = i+1, j+1
		case j == len(midB) || (i < len(midA) && lcs[i+1][j] >= lcs[i][j+1]):
			edits = append(edits, edit{'-', midA[i], prefix + i, prefix + j})
			i++
		default:
			edits = append(edits, edit{'+', midB[j], prefix + i, prefix + j})
			j++
		}
	}
	for k := range suffix {
		ai, bi := len(a)-suffix+k, len(b)-suffix+k
		edits = append(edits, edit{' ', a[ai], ai, bi})
	}
	return edits
}

// hunks are the ranges of edits to print: each change with diffContext
// kept lines around it, changes closer than twice that in one hunk.
func hunks(edits []edit) [][2]int {
	var out [][2]int
	for i := 0; i < len(edits); {
		if edits[i].kind == ' ' {
			i++
			continue
		}
		lo, end := max(0, i-diffContext), i
		for {
			for end < len(edits) && edits[end].kind != ' ' {
				end++
			}
			next := end
			for next < len(edits) && edits[next].kind == ' ' {
				next++
			}
			if next == len(edits) || next-end > 2*diffContext {
				break
			}
			end = next
		}
		hi := min(len(edits), end+diffContext)
		out = append(out, [2]int{lo, hi})
		i = hi
	}
	return out
}

func writeHunk(out *strings.Builder, edits []edit) {
	var countA, countB int
	for _, e := range edits {
		if e.kind != '+' {
			countA++
		}
		if e.kind != '-' {
			countB++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(edits[0].a, countA), hunkRange(edits[0].b, countB))
	for _, e := range edits {
		out.WriteByte(e.kind)
		out.WriteString(e.text)
		out.WriteByte('\n')
	}
}

// hunkRange is diff -u's range: the first line, counted from 1, and the
// number of lines when it is not 1; an empty range names the line before.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
