package grade

import (
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sync"
)

// scoreAUC is sklearn's roc_auc_score, per target column, averaged over
// columns. The area is computed exactly as the Mann-Whitney count (a tie
// between a positive and a negative counts one half, which is what sklearn's
// trapezoid over tied thresholds amounts to), then divided once.
func (a *Answers) scoreAUC(ws []*worker) Result {
	n, k := len(a.ids), a.k
	pos := make([]float64, 0, n)
	neg := make([]float64, 0, n)
	total := 0.0
	for t := 0; t < k; t++ {
		pos, neg = pos[:0], neg[:0]
		for _, w := range ws {
			for r, ai := range w.rowAns {
				if a.nums[int(ai)*k+t] == 1 {
					pos = append(pos, w.vals[r*k+t])
				} else {
					neg = append(neg, w.vals[r*k+t])
				}
			}
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.Sort(pos)
		}()
		slices.Sort(neg)
		wg.Wait()
		total += aucSorted(pos, neg)
	}
	return valid(total / float64(k))
}

// aucSorted returns P(score of a positive > score of a negative) + ½ P(equal)
// for ascending, NaN-free pos and neg, both non-empty.
func aucSorted(pos, neg []float64) float64 {
	var twice uint64 // twice the Mann-Whitney U, an exact integer
	j := 0
	for i := 0; i < len(pos); {
		p := pos[i]
		i2 := i + 1
		for i2 < len(pos) && pos[i2] == p {
			i2++
		}
		for j < len(neg) && neg[j] < p {
			j++
		}
		e := j
		for e < len(neg) && neg[e] == p {
			e++
		}
		twice += uint64(i2-i) * (2*uint64(j) + uint64(e-j))
		i = i2
	}
	return float64(twice) / (2 * float64(len(pos)) * float64(len(neg)))
}

// scorePearson is scipy.stats.pearsonr's statistic, computed the way scipy
// does it (centre, scale by the norms, dot, clip to [-1, 1]).
func (a *Answers) scorePearson(ws []*worker) Result {
	n := len(a.ids)
	x := make([]float64, 0, n) // predictions
	y := make([]float64, 0, n) // answers
	for _, w := range ws {
		for r, ai := range w.rowAns {
			x = append(x, w.vals[r])
			y = append(y, a.nums[ai])
		}
	}
	if constant(x) {
		return invalid("every prediction is %v; Pearson r of a constant is undefined", x[0])
	}
	if n == 2 {
		return valid(sign(x[1]-x[0]) * sign(y[1]-y[0]))
	}
	center(x)
	center(y)
	nx, ny := norm(x), norm(y)
	if nx == 0 || ny == 0 || math.IsInf(nx, 0) || math.IsInf(ny, 0) {
		return invalid("predictions are too close to constant or too large for Pearson r")
	}
	var dot neumaier
	for i := range x {
		dot.add((x[i] / nx) * (y[i] / ny))
	}
	return valid(max(-1, min(1, dot.value())))
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func center(v []float64) {
	var s neumaier
	for _, x := range v {
		s.add(x)
	}
	m := s.value() / float64(len(v))
	for i := range v {
		v[i] -= m
	}
}

// norm is the Euclidean norm, scaled so it cannot overflow (as BLAS nrm2).
func norm(v []float64) float64 {
	scale := 0.0
	for _, x := range v {
		scale = max(scale, math.Abs(x))
	}
	if scale == 0 || math.IsInf(scale, 0) {
		return scale
	}
	var s neumaier
	for _, x := range v {
		q := x / scale
		s.add(q * q)
	}
	return scale * math.Sqrt(s.value())
}

// scoreQWK is sklearn's cohen_kappa_score(weights="quadratic"): the weight of
// a cell is the squared difference of the two labels' ranks in the sorted
// union of labels, not of the label values. Sums are exact integers; the one
// division rounds once.
func (a *Answers) scoreQWK(ws []*worker) Result {
	n := len(a.ids)
	labels := slices.Clone(a.qwkLabels)
	known := make(map[int64]bool, len(labels))
	for _, l := range labels {
		known[l] = true
	}
	for _, w := range ws {
		for _, v := range w.vals {
			if l := int64(v); !known[l] {
				known[l] = true
				labels = append(labels, l)
			}
		}
	}
	slices.Sort(labels)
	rank := make(map[int64]int64, len(labels))
	for i, l := range labels {
		rank[l] = int64(i)
	}
	cntPred := make([]int64, len(labels))
	cntTrue := make([]int64, len(labels))
	var hi, lo uint64 // Σ (rank(pred) - rank(true))², 128-bit
	for _, w := range ws {
		for r, ai := range w.rowAns {
			p, t := rank[int64(w.vals[r])], rank[int64(a.nums[ai])]
			cntPred[p]++
			cntTrue[t]++
			d := uint64((p - t) * (p - t))
			var carry uint64
			lo, carry = bits.Add64(lo, d, 0)
			hi += carry
		}
	}
	observed := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
	observed.Or(observed, new(big.Int).SetUint64(lo))

	// n · Σ_ij (i-j)² pred_i true_j = n·Σ pred_i i² + n·Σ true_j j² − 2·(Σ pred_i i)(Σ true_j j)
	moments := func(cnt []int64) (m1, m2 *big.Int) {
		m1, m2 = new(big.Int), new(big.Int)
		var c, i, term big.Int
		for r, v := range cnt {
			if v == 0 {
				continue
			}
			c.SetInt64(v)
			i.SetInt64(int64(r))
			term.Mul(&c, &i)
			m1.Add(m1, &term)
			term.Mul(&term, &i)
			m2.Add(m2, &term)
		}
		return m1, m2
	}
	p1, p2 := moments(cntPred)
	t1, t2 := moments(cntTrue)
	bn := big.NewInt(int64(n))
	expectedN := new(big.Int).Add(p2, t2)
	expectedN.Mul(expectedN, bn)
	cross := new(big.Int).Mul(p1, t1)
	cross.Lsh(cross, 1)
	expectedN.Sub(expectedN, cross)
	if expectedN.Sign() <= 0 {
		return invalid("quadratic weighted kappa is undefined: expected disagreement is zero")
	}
	// kappa = 1 − observed / (expectedN / n)
	ratio, _ := new(big.Rat).SetFrac(observed.Mul(observed, bn), expectedN).Float64()
	return valid(1 - ratio)
}
