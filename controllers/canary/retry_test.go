package canary

import "testing"

func TestRetryAskedByAPartSetAndChanged(t *testing.T) {
	for _, tc := range []struct {
		token, handled string
		asked          bool
		recorded       string
	}{
		{"", "", false, ""},
		{"s1/", "", true, "s1/"},
		{"s1/a1", "s1/", true, "s1/a1"},
		{"s1/a1", "s1/a1", false, "s1/a1"},
		// The canary strategy went away with its retry field: the
		// annotation's part was handled already.
		{"/a1", "s1/a1", false, "s1/a1"},
		{"/a2", "s1/a1", true, "s1/a2"},
		// The annotation removed: the spec's part was handled already.
		{"s1/", "s1/a1", false, "s1/a1"},
		{"s2/", "s1/a1", true, "s2/a1"},
		{"", "s1/a1", false, "s1/a1"},
	} {
		if got := RetryAsked(tc.token, tc.handled); got != tc.asked {
			t.Errorf("RetryAsked(%q, %q) = %t, want %t", tc.token, tc.handled, got, tc.asked)
		}
		if got := RetryHandled(tc.token, tc.handled); got != tc.recorded {
			t.Errorf("RetryHandled(%q, %q) = %q, want %q", tc.token, tc.handled, got, tc.recorded)
		}
	}
}
