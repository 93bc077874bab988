package helm

import "testing"

func TestLint(t *testing.T) {
	// --strict turns lint's warnings into failures; the plain run is what a
	// user runs first.
	for _, args := range [][]string{{"lint", chartDir()}, {"lint", "--strict", chartDir()}} {
		out, err := helm(t, args...)
		if err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	}
}
