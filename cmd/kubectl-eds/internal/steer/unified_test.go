package steer

import (
	"strings"
	"testing"
)

// The expected hunks are what GNU diff -u prints for the same files.
func TestUnifiedDiffMatchesDiffU(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{
			name: "changes far apart make two hunks",
			a:    "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n",
			b:    "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nM\nn\n",
			want: "@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -10,4 +10,5 @@\n j\n k\n l\n-m\n+M\n+n\n",
		},
		{
			name: "changes within twice the context make one hunk",
			a:    "a\nb\nc\nd\ne\nf\ng\nh\n",
			b:    "a\nb\nx\nc\nd\ne\nf\ng\nh\ny\n",
			want: "@@ -1,8 +1,10 @@\n a\n b\n+x\n c\n d\n e\n f\n g\n h\n+y\n",
		},
		{
			name: "from nothing",
			a:    "",
			b:    "x\ny\n",
			want: "@@ -0,0 +1,2 @@\n+x\n+y\n",
		},
		{
			name: "a removed line",
			a:    "a\nb\nc\nd\ne\nf\ng\nh\ni\n",
			b:    "a\nb\nc\nd\nf\ng\nh\ni\n",
			want: "@@ -2,7 +2,6 @@\n b\n c\n d\n-e\n f\n g\n h\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unifiedDiff("from", "to", tc.a, tc.b)
			if want := "--- from\n+++ to\n" + tc.want; got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestUnifiedDiffOfEqualTextsIsEmpty(t *testing.T) {
	text := strings.Repeat("same\n", 20)
	if got := unifiedDiff("from", "to", text, text); got != "" {
		t.Errorf("got %q, want nothing", got)
	}
}
