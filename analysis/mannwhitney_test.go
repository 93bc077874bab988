package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// Notation used in the worked examples below: n1 = len(x), n2 = len(y),
// n = n1 + n2, R1 = sum of the midranks of x in the pooled sample,
// U = R1 - n1(n1+1)/2, mu = n1 n2 / 2,
// sigma^2 = n1 n2 / 12 * ((n+1) - T / (n(n-1))) with T = sum over tie groups
// of t^3 - t, d = U - mu, Phi the standard normal CDF and Q = 1 - Phi.
// With continuity correction: greater z = (d - 0.5)/sigma, p = Q(z);
// less z = (d + 0.5)/sigma, p = Phi(z);
// two-sided z = (d - sign(d) 0.5)/sigma, p = 2 min(Phi(z), Q(z)).

type mannWhitneyReference struct {
	name string
	x, y []float64
	alt  Alternative
	u    float64
	z    float64
	zTol float64
	p    float64
	pTol float64
}

var (
	// SciPy mannwhitneyu docstring: ages at diagnosis of type II diabetes.
	scipyMales   = []float64{19, 22, 16, 29, 24}
	scipyFemales = []float64{20, 11, 17, 12}

	// DolphinDB mannWhitneyUTest documentation example.
	dolphinX = []float64{5, 1, 4, 3, 5}
	dolphinY = []float64{2, 4, 7, -1, 0, 4}

	// endmemo.com wilcox.test examples.
	endmemoX  = []float64{1, 5, 9, 24, 56, 21, 3, 7, 21, 4}
	endmemoY1 = []float64{12, 15, 5, 9, 9, 14, 56, 22, 3, 7, 32, 5}
	endmemoY2 = []float64{1233, 4356, 987, 39999, 1111, 200000}

	// NAG g08amc / g08ahf example program data.
	nagGroup1 = []float64{13, 6, 12, 7, 12, 7, 10, 7, 10, 7, 16, 7, 10, 8, 9, 8}
	nagGroup2 = []float64{
		17, 6, 10, 8, 15, 8, 15, 10, 15, 10, 14, 10,
		14, 11, 14, 11, 13, 12, 13, 12, 13, 12, 12,
	}

	// R datasets::airquality, Ozone of Month 5 and Month 8, NA removed, in
	// day order.
	ozoneMay = []float64{
		41, 36, 12, 18, 28, 23, 19, 8, 7, 16, 11, 14, 18,
		14, 34, 6, 30, 11, 1, 11, 4, 32, 23, 45, 115, 37,
	}
	ozoneAugust = []float64{
		39, 9, 16, 78, 35, 66, 122, 89, 110, 44, 28, 65, 22,
		59, 23, 31, 44, 21, 9, 45, 168, 73, 76, 118, 84, 85,
	}
)

var mannWhitneyReferences = []mannWhitneyReference{
	// SciPy documents U = 17 for males and an asymptotic two-sided p-value
	// of 0.11134688653314041 with continuity correction.
	// Pooled order: 11f 12f 16m 17f 19m 20f 22m 24m 29m, so the male ranks
	// are 3, 5, 7, 8, 9: R1 = 32, U = 32 - 15 = 17. No ties.
	// mu = 10, sigma^2 = 20 * 10 / 12 = 16.6667, sigma = 4.082483.
	// z = (7 - 0.5) / 4.082483 = 1.592168, Q(z) = 0.0556734, p = 0.1113469.
	{
		name: "scipy docstring, two-sided",
		x:    scipyMales, y: scipyFemales, alt: AlternativeTwoSided,
		u: 17, z: 1.592168, zTol: 1e-6,
		p: 0.11134688653314041, pTol: 1e-12,
	},
	// Same data from the females' side, testing that females are diagnosed
	// younger: U = 20 - 17 = 3, d = -7, z = (-7 + 0.5) / 4.082483 = -1.592168,
	// p = Phi(z), exactly half the two-sided value above.
	{
		name: "scipy docstring, females less than males",
		x:    scipyFemales, y: scipyMales, alt: AlternativeLess,
		u: 3, z: -1.592168, zTol: 1e-6,
		p: 0.11134688653314041 / 2, pTol: 1e-12,
	},
	// ClickHouse documents mannWhitneyUTest('greater') on
	// x = [10, 11, 12], y = [1, 2, 3] as (9, 0.04042779918503192), with
	// continuity correction on by default.
	// R1 = 4 + 5 + 6 = 15, U = 15 - 6 = 9, mu = 4.5,
	// sigma^2 = 9 * 7 / 12 = 5.25, sigma = 2.291288,
	// z = (4.5 - 0.5) / 2.291288 = 1.745743, p = Q(z) = 0.0404278.
	{
		name: "clickhouse docs, greater",
		x:    []float64{10, 11, 12}, y: []float64{1, 2, 3}, alt: AlternativeGreater,
		u: 9, z: 1.745743, zTol: 1e-6,
		p: 0.04042779918503192, pTol: 1e-12,
	},
	// DolphinDB documents mannWhitneyUTest(X, Y) for X = [5, 1, 4, 3, 5],
	// Y = [2, 4, 7, -1, 0, 4] with correct = true as U = 11 and p-values
	// 0.518023 (two-sided), 0.259011 (less), 0.797036 (greater). Those are
	// the statistic and one-sided p-values of Y against X, so Y is x here.
	// Pooled order: -1x 0x 1y 2x 3y 4x 4x 4y 5y 5y 7x. The three 4s share
	// ranks 6..8 (midrank 7), the two 5s ranks 9..10 (midrank 9.5).
	// R1 = 1 + 2 + 4 + 7 + 7 + 11 = 32, U = 32 - 21 = 11, mu = 15, d = -4.
	// T = (27 - 3) + (8 - 2) = 30, n = 11,
	// sigma^2 = 30 / 12 * (12 - 30 / 110) = 29.318182, sigma = 5.414627.
	// Two-sided: z = (-4 + 0.5) / 5.414627 = -0.646397, p = 2 Phi(z) = 0.518022.
	// Less:      z = -0.646397, p = Phi(z) = 0.259011.
	// Greater:   z = (-4 - 0.5) / 5.414627 = -0.831082, p = Q(z) = 0.797036.
	// The printed two-sided 0.518023 is one unit of the last digit above
	// twice the printed one-sided 0.259011, hence the wider tolerance there.
	{
		name: "dolphindb docs with ties, two-sided",
		x:    dolphinY, y: dolphinX, alt: AlternativeTwoSided,
		u: 11, z: -0.646397, zTol: 1e-6,
		p: 0.518023, pTol: 2e-6,
	},
	{
		name: "dolphindb docs with ties, less",
		x:    dolphinY, y: dolphinX, alt: AlternativeLess,
		u: 11, z: -0.646397, zTol: 1e-6,
		p: 0.259011, pTol: 1e-6,
	},
	{
		name: "dolphindb docs with ties, greater",
		x:    dolphinY, y: dolphinX, alt: AlternativeGreater,
		u: 11, z: -0.831082, zTol: 1e-6,
		p: 0.797036, pTol: 1e-6,
	},
	// endmemo.com shows R's wilcox.test(x, y) falling back to the normal
	// approximation with continuity correction because of ties:
	// W = 51.5, p-value = 0.5966.
	// Midranks: 1->1, 3->2.5, 4->4, 5->6, 7->8.5, 9->11, 12->13, 14->14,
	// 15->15, 21->16.5, 22->18, 24->19, 32->20, 56->21.5.
	// R1 = 1 + 6 + 11 + 19 + 21.5 + 16.5 + 2.5 + 8.5 + 16.5 + 4 = 106.5,
	// U = 106.5 - 55 = 51.5, mu = 60, d = -8.5.
	// Tie groups 3(2) 5(3) 7(2) 9(3) 21(2) 56(2): T = 6+24+6+24+6+6 = 72,
	// sigma^2 = 120 / 12 * (23 - 72 / 462) = 228.441558, sigma = 15.114283,
	// z = (-8.5 + 0.5) / 15.114283 = -0.529301, p = 2 Phi(z) = 0.596597.
	{
		name: "R wilcox.test endmemo example, two-sided with ties",
		x:    endmemoX, y: endmemoY1, alt: AlternativeTwoSided,
		u: 51.5, z: -0.529301, zTol: 1e-6,
		p: 0.5966, pTol: 5e-5,
	},
	// Same page, every y above every x: W = 0, p-value = 0.001364.
	// U = 0 (R1 = 1 + ... + 10 = 55, the tied 21s share 7.5), mu = 30,
	// T = 6 (the two 21s), sigma^2 = 60 / 12 * (17 - 6 / 240) = 84.875,
	// sigma = 9.212763, z = (-30 + 0.5) / 9.212763 = -3.202080,
	// p = 2 Phi(z) = 0.00136439.
	{
		name: "R wilcox.test endmemo example, complete separation",
		x:    endmemoX, y: endmemoY2, alt: AlternativeTwoSided,
		u: 0, z: -3.202080, zTol: 1e-6,
		p: 0.001364, pTol: 5e-7,
	},
	// NAG g08amc / g08ahf example results, lower tail, heavily tied data:
	// test statistic 86.0000, normal statistic -2.8039, approximate tail
	// probability 0.0025. NAG prints the ranks of group 1, which sum to
	// R1 = 222, so U = 222 - 136 = 86, mu = 184.
	// Tie groups: 6(2) 7(5) 8(4) 10(7) 11(2) 12(6) 13(4) 14(3) 15(3):
	// T = 6+120+60+336+6+210+60+24+24 = 846, n = 39,
	// sigma^2 = 368 / 12 * (40 - 846 / 1482) = 1209.16, sigma = 34.772987,
	// z = (86 - 184 + 0.5) / 34.772987 = -2.803901, p = Phi(z) = 0.0025244.
	{
		name: "NAG g08amc example, less with ties",
		x:    nagGroup1, y: nagGroup2, alt: AlternativeLess,
		u: 86, z: -2.8039, zTol: 5e-5,
		p: 0.0025, pTol: 5e-5,
	},
	// R's own wilcox.test help page example
	// wilcox.test(Ozone ~ Month, data = airquality, subset = Month %in% c(5, 8))
	// prints "Wilcoxon rank sum test with continuity correction",
	// W = 127.5, p-value = 0.0001208.
	// n1 = n2 = 26, R1 = 478.5, U = 478.5 - 351 = 127.5, mu = 338, T = 90,
	// sigma^2 = 676 / 12 * (53 - 90 / 2652) = 2983.755, sigma = 54.623758,
	// z = (127.5 - 338 + 0.5) / 54.623758 = -3.844481, p = 2 Phi(z) = 0.00012081.
	{
		name: "R airquality example, two-sided with ties",
		x:    ozoneMay, y: ozoneAugust, alt: AlternativeTwoSided,
		u: 127.5, z: -3.844481, zTol: 1e-6,
		p: 0.0001208, pTol: 5e-8,
	},
	// Smallest possible samples, x = [1], y = [2]: U = 0, mu = 0.5, d = -0.5,
	// sigma^2 = 1 / 12 * 3 = 0.25, sigma = 0.5.
	// Two-sided: z = (-0.5 + 0.5) / 0.5 = 0, p = 2 * 0.5 = 1.
	// Less:      z = 0, p = Phi(0) = 0.5.
	// Greater:   z = (-0.5 - 0.5) / 0.5 = -2, p = Q(-2) = Phi(2) = 0.977250.
	{
		name: "one value each, two-sided",
		x:    []float64{1}, y: []float64{2}, alt: AlternativeTwoSided,
		u: 0, z: 0, zTol: 1e-12,
		p: 1, pTol: 1e-12,
	},
	{
		name: "one value each, less",
		x:    []float64{1}, y: []float64{2}, alt: AlternativeLess,
		u: 0, z: 0, zTol: 1e-12,
		p: 0.5, pTol: 1e-12,
	},
	{
		name: "one value each, greater",
		x:    []float64{1}, y: []float64{2}, alt: AlternativeGreater,
		u: 0, z: -2, zTol: 1e-12,
		p: 0.9772498680518208, pTol: 1e-12,
	},
}

func TestMannWhitneyUReferenceValues(t *testing.T) {
	for _, tc := range mannWhitneyReferences {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MannWhitneyU(tc.x, tc.y, tc.alt)
			if err != nil {
				t.Fatalf("MannWhitneyU: %v", err)
			}
			if got.U != tc.u {
				t.Errorf("U = %v, want %v", got.U, tc.u)
			}
			if math.Abs(got.Z-tc.z) > tc.zTol {
				t.Errorf("Z = %.9f, want %.9f ± %g", got.Z, tc.z, tc.zTol)
			}
			if math.Abs(got.P-tc.p) > tc.pTol {
				t.Errorf("P = %.12g, want %.12g ± %g", got.P, tc.p, tc.pTol)
			}
		})
	}
}

func TestMannWhitneyUSwapSymmetry(t *testing.T) {
	mirror := map[Alternative]Alternative{
		AlternativeGreater:  AlternativeLess,
		AlternativeLess:     AlternativeGreater,
		AlternativeTwoSided: AlternativeTwoSided,
	}
	samples := []struct {
		name string
		x, y []float64
	}{
		{"scipy docstring", scipyMales, scipyFemales},
		{"dolphindb ties", dolphinX, dolphinY},
		{"endmemo ties", endmemoX, endmemoY1},
		{"nag ties", nagGroup1, nagGroup2},
		{"overlapping", []float64{0.1, 0.5, 0.5, 0.9}, []float64{0.2, 0.5, 0.7}},
	}
	for _, s := range samples {
		for alt, swapped := range mirror {
			forward, err := MannWhitneyU(s.x, s.y, alt)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			backward, err := MannWhitneyU(s.y, s.x, swapped)
			if err != nil {
				t.Fatalf("%s swapped: %v", s.name, err)
			}
			product := float64(len(s.x) * len(s.y))
			if forward.U+backward.U != product {
				t.Errorf("%s alt %d: U(x,y) + U(y,x) = %v + %v, want %v",
					s.name, alt, forward.U, backward.U, product)
			}
			if math.Abs(forward.Z+backward.Z) > 1e-12 {
				t.Errorf("%s alt %d: Z(x,y) = %v, Z(y,x) = %v, want opposites",
					s.name, alt, forward.Z, backward.Z)
			}
			if math.Abs(forward.P-backward.P) > 1e-12 {
				t.Errorf("%s alt %d: P(x,y) = %v, P(y,x) = %v, want equal",
					s.name, alt, forward.P, backward.P)
			}
		}
	}
}

func TestMannWhitneyUMonotoneTransformInvariance(t *testing.T) {
	// Latencies in milliseconds, with ties across and within samples.
	x := []float64{12.5, 30, 7.25, 30, 18, 44.5, 9}
	y := []float64{5, 18, 11, 3.5, 30, 8, 9, 2}
	transforms := []struct {
		name string
		f    func(float64) float64
	}{
		{"affine", func(v float64) float64 { return 3*v - 100 }},
		{"log", math.Log},
		{"exp", func(v float64) float64 { return math.Exp(v / 10) }},
		{"cube", func(v float64) float64 { return v * v * v }},
		{"seconds", func(v float64) float64 { return v / 1000 }},
	}
	for _, alt := range []Alternative{AlternativeGreater, AlternativeLess, AlternativeTwoSided} {
		want, err := MannWhitneyU(x, y, alt)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range transforms {
			tx := make([]float64, len(x))
			for i, v := range x {
				tx[i] = tr.f(v)
			}
			ty := make([]float64, len(y))
			for i, v := range y {
				ty[i] = tr.f(v)
			}
			got, err := MannWhitneyU(tx, ty, alt)
			if err != nil {
				t.Fatalf("%s: %v", tr.name, err)
			}
			if got != want {
				t.Errorf("alt %d, %s transform: got %+v, want %+v", alt, tr.name, got, want)
			}
		}
	}
}

func TestMannWhitneyULargeBaseline(t *testing.T) {
	distinct := make([]float64, 5000)
	tied := make([]float64, 5000)
	for i := range distinct {
		distinct[i] = float64(i)
		tied[i] = float64(i % 50)
	}

	cases := []struct {
		name     string
		canary   []float64
		baseline []float64
		u, z, p  float64
	}{
		// Canary above every distinct baseline value: U = n1 n2 = 15000,
		// mu = 7500, no ties, sigma^2 = 3 * 5000 * 5004 / 12 = 6255000,
		// sigma = 2500.999800, z = 7499.5 / 2500.999800 = 2.9986008,
		// p = Q(z) = 0.0013561121.
		{
			name:   "canary above all",
			canary: []float64{1e9, 1e9 + 1, 1e9 + 2}, baseline: distinct,
			u: 15000, z: 2.9986008, p: 0.0013561121,
		},
		// Baseline holds 0..49 a hundred times each; canary 10, 25, 40 each
		// sit above 100 * value baseline points and tie with 100 more:
		// U = (1000 + 50) + (2500 + 50) + (4000 + 50) = 7650, mu = 7500.
		// Three groups of 101 and 47 of 100:
		// T = 3 * (101^3 - 101) + 47 * (100^3 - 100) = 50085900, n = 5003,
		// sigma^2 = 1250 * (5004 - 50085900 / 25025006) = 6252498.2,
		// sigma = 2500.499592, z = 149.5 / 2500.499592 = 0.0597880522,
		// p = Q(z) = 0.4761622208.
		{
			name:   "canary inside heavily tied baseline",
			canary: []float64{10, 25, 40}, baseline: tied,
			u: 7650, z: 0.0597880522, p: 0.4761622208,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got, err := MannWhitneyU(tc.canary, tc.baseline, AlternativeGreater)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			// A few thousand samples must cost milliseconds, not seconds; the
			// bound is loose so that a loaded machine does not trip it.
			if elapsed > 2*time.Second {
				t.Errorf("took %v for %d values", elapsed, len(tc.canary)+len(tc.baseline))
			}
			if got.U != tc.u {
				t.Errorf("U = %v, want %v", got.U, tc.u)
			}
			if math.Abs(got.Z-tc.z) > 1e-6 {
				t.Errorf("Z = %.9f, want %.9f", got.Z, tc.z)
			}
			if math.Abs(got.P-tc.p) > 1e-8 {
				t.Errorf("P = %.12g, want %.12g", got.P, tc.p)
			}
		})
	}

	t.Run("complete separation stays finite", func(t *testing.T) {
		high := make([]float64, len(distinct))
		for i, v := range distinct {
			high[i] = v + 1e6
		}
		for _, alt := range []Alternative{AlternativeGreater, AlternativeLess, AlternativeTwoSided} {
			got, err := MannWhitneyU(high, distinct, alt)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(got.Z) || math.IsInf(got.Z, 0) || math.IsNaN(got.P) {
				t.Fatalf("alt %d: non-finite result %+v", alt, got)
			}
			if got.P < 0 || got.P > 1 {
				t.Errorf("alt %d: P = %v outside [0, 1]", alt, got.P)
			}
			if got.U != 25e6 {
				t.Errorf("alt %d: U = %v, want 25e6", alt, got.U)
			}
		}
	})
}

func TestMannWhitneyUAllTied(t *testing.T) {
	cases := []struct {
		name string
		x, y []float64
	}{
		{"one each", []float64{3}, []float64{3}},
		{"several", []float64{5, 5, 5}, []float64{5, 5}},
		{"signed zeros", []float64{0, math.Copysign(0, -1)}, []float64{0}},
		{"large", slices.Repeat([]float64{42}, 3), slices.Repeat([]float64{42}, 5000)},
	}
	for _, tc := range cases {
		for _, alt := range []Alternative{AlternativeGreater, AlternativeLess, AlternativeTwoSided} {
			got, err := MannWhitneyU(tc.x, tc.y, alt)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			want := MannWhitneyResult{U: float64(len(tc.x)*len(tc.y)) / 2, Z: 0, P: 1}
			if got != want {
				t.Errorf("%s alt %d: got %+v, want %+v", tc.name, alt, got, want)
			}
		}
	}
}

func TestMannWhitneyUInfiniteValues(t *testing.T) {
	// +Inf beats 1 and 2 and ties with the other +Inf: U = 2 + 0.5.
	got, err := MannWhitneyU([]float64{math.Inf(1)}, []float64{1, 2, math.Inf(1)}, AlternativeGreater)
	if err != nil {
		t.Fatal(err)
	}
	if got.U != 2.5 {
		t.Errorf("U = %v, want 2.5", got.U)
	}
	if math.IsNaN(got.Z) || math.IsNaN(got.P) {
		t.Errorf("non-finite result %+v", got)
	}
}

func TestMannWhitneyUKeepsInputsUnchanged(t *testing.T) {
	x := []float64{3, 1, 2}
	y := []float64{9, 0, 4, 4}
	xBefore, yBefore := slices.Clone(x), slices.Clone(y)
	if _, err := MannWhitneyU(x, y, AlternativeTwoSided); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, xBefore) || !slices.Equal(y, yBefore) {
		t.Errorf("inputs modified: x = %v, y = %v", x, y)
	}
}

func TestMannWhitneyUErrors(t *testing.T) {
	ok := []float64{1, 2, 3}
	cases := []struct {
		name    string
		x, y    []float64
		alt     Alternative
		wantErr []string
	}{
		{"nil x", nil, ok, AlternativeGreater, []string{"sample x", "empty"}},
		{"empty y", ok, []float64{}, AlternativeGreater, []string{"sample y", "empty"}},
		{"NaN in x", []float64{1, math.NaN()}, ok, AlternativeGreater, []string{"sample x", "NaN", "index 1"}},
		{"NaN in y", ok, []float64{math.NaN()}, AlternativeLess, []string{"sample y", "NaN", "index 0"}},
		{"alternative past the last", ok, ok, AlternativeTwoSided + 1, []string{"alternative", "3"}},
		{"negative alternative", ok, ok, Alternative(-1), []string{"alternative", "-1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MannWhitneyU(tc.x, tc.y, tc.alt)
			if err == nil {
				t.Fatalf("got %+v and no error", got)
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not mention %q", err, part)
				}
			}
		})
	}
}

func BenchmarkMannWhitneyU(b *testing.B) {
	baseline := make([]float64, 5000)
	for i := range baseline {
		baseline[i] = float64((i * 7919) % 997)
	}
	canary := []float64{500, 812.5, 990}
	for b.Loop() {
		if _, err := MannWhitneyU(canary, baseline, AlternativeGreater); err != nil {
			b.Fatal(err)
		}
	}
}
