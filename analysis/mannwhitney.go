package analysis

import (
	"fmt"
	"math"
	"slices"
)

// Alternative is the hypothesis tested against "x and y come from the same
// distribution" by MannWhitneyU.
type Alternative int

const (
	// AlternativeGreater is the one-sided hypothesis that x tends to be larger
	// than y.
	AlternativeGreater Alternative = iota
	// AlternativeLess is the one-sided hypothesis that x tends to be smaller
	// than y.
	AlternativeLess
	// AlternativeTwoSided is the hypothesis that x and y differ in either
	// direction.
	AlternativeTwoSided
)

// MannWhitneyResult is the outcome of a Mann-Whitney U test.
//
// U is the statistic of x: the number of pairs (xi, yj) with xi > yj, plus
// half the number of tied pairs. It ranges from 0 to len(x)*len(y), and
// swapping x and y turns it into len(x)*len(y) - U.
//
// Z is the normal score of U under the null hypothesis, with the tie-corrected
// variance and the continuity correction of the chosen Alternative, so that P
// is the normal tail probability beyond Z.
//
// P is the p-value for the chosen Alternative.
type MannWhitneyResult struct {
	U, Z, P float64
}

// MannWhitneyU runs the Mann-Whitney U test (Wilcoxon rank-sum test) of x
// against y, using the normal approximation with tie correction and
// continuity correction. The results match R's
// wilcox.test(x, y, exact = FALSE, correct = TRUE) and SciPy's
// mannwhitneyu(x, y, use_continuity=True, method="asymptotic").
//
// The normal approximation is used even for tiny samples: metric samples from
// pods are routinely tied, where exact tables do not apply, and a single code
// path keeps the canary verdict predictable.
//
// When every value of both samples is equal there is no evidence either way:
// the result has Z = 0 and P = 1.
//
// It returns an error when a sample is empty or contains NaN, since a rank of
// NaN is meaningless, and when alt is not one of the defined alternatives.
// Infinite values are ranked like any other value.
func MannWhitneyU(x, y []float64, alt Alternative) (MannWhitneyResult, error) {
	if err := checkMannWhitneySample("x", x); err != nil {
		return MannWhitneyResult{}, err
	}
	if err := checkMannWhitneySample("y", y); err != nil {
		return MannWhitneyResult{}, err
	}
	if alt != AlternativeGreater && alt != AlternativeLess && alt != AlternativeTwoSided {
		return MannWhitneyResult{}, fmt.Errorf("mann-whitney: unknown alternative %d", int(alt))
	}

	xs := slices.Clone(x)
	ys := slices.Clone(y)
	slices.Sort(xs)
	slices.Sort(ys)

	// Walking both sorted samples together visits the pooled values in
	// order, one group of equal values at a time, so midranks and tie sizes
	// come out without sorting a pooled copy.
	var (
		rankSumX  float64 // R1: sum of the midranks of x
		tieSum    float64 // sum over tie groups of t^3 - t
		ranked    int     // pooled values already ranked
		groups    int
		i, j      int
		nx, ny, n = len(xs), len(ys), len(xs) + len(ys)
	)
	for i < nx || j < ny {
		var v float64
		if j >= ny || (i < nx && xs[i] <= ys[j]) {
			v = xs[i]
		} else {
			v = ys[j]
		}
		inX := 0
		for i < nx && xs[i] == v {
			i++
			inX++
		}
		inY := 0
		for j < ny && ys[j] == v {
			j++
			inY++
		}
		t := float64(inX + inY)
		// The group occupies ranks ranked+1 .. ranked+t.
		midrank := float64(ranked) + (t+1)/2
		rankSumX += float64(inX) * midrank
		tieSum += t*t*t - t
		ranked += inX + inY
		groups++
	}

	n1, n2 := float64(nx), float64(ny)
	u := rankSumX - n1*(n1+1)/2
	mean := n1 * n2 / 2
	nf := float64(n)
	variance := n1 * n2 / 12 * ((nf + 1) - tieSum/(nf*(nf-1)))
	if groups == 1 || !(variance > 0) {
		return MannWhitneyResult{U: u, Z: 0, P: 1}, nil
	}

	diff := u - mean
	// U is discrete and the normal is continuous: shifting U half a unit
	// towards the tail being measured makes the normal tail include the
	// probability mass at U itself. For the two-sided test the shift is
	// towards the mean, whichever side U lies on.
	var correction float64
	switch alt {
	case AlternativeGreater:
		correction = 0.5
	case AlternativeLess:
		correction = -0.5
	case AlternativeTwoSided:
		switch {
		case diff > 0:
			correction = 0.5
		case diff < 0:
			correction = -0.5
		}
	}
	z := (diff - correction) / math.Sqrt(variance)

	// Both tails come from Erfc rather than 1 - Phi so that tiny p-values
	// keep their precision instead of rounding to 0.
	upper := 0.5 * math.Erfc(z/math.Sqrt2)
	lower := 0.5 * math.Erfc(-z/math.Sqrt2)
	var p float64
	switch alt {
	case AlternativeGreater:
		p = upper
	case AlternativeLess:
		p = lower
	case AlternativeTwoSided:
		p = math.Min(1, 2*math.Min(upper, lower))
	}
	return MannWhitneyResult{U: u, Z: z, P: p}, nil
}

func checkMannWhitneySample(name string, sample []float64) error {
	if len(sample) == 0 {
		return fmt.Errorf("mann-whitney: sample %s is empty", name)
	}
	for k, v := range sample {
		if math.IsNaN(v) {
			return fmt.Errorf("mann-whitney: sample %s contains NaN at index %d", name, k)
		}
	}
	return nil
}
