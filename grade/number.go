package grade

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"
)

type numStatus uint8

const (
	numOK        numStatus = iota
	numEmpty               // nothing but spaces
	numNotFinite           // a NaN or infinity, or a word pandas reads as one
	numBad                 // not a number
)

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNumber reads a decimal number as pandas' C parser with
// float_precision="round_trip" does: optional spaces or tabs around it,
// correctly rounded. Hex floats, underscores and Go-only spellings are rejected.
func parseNumber(b []byte) (float64, numStatus) {
	b = trimBlanks(b)
	if len(b) == 0 {
		return 0, numEmpty
	}
	d, st := scanDecimal(b)
	if st != numOK {
		return 0, st
	}
	return d.toFloat(b)
}

// trimBlanks drops the spaces and tabs around b.
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// decimal is a scanned number literal: mant × 10^exp, its sign, and whether
// digits beyond the 19th were dropped from mant (trunc).
type decimal struct {
	mant  uint64
	exp   int
	neg   bool
	trunc bool
}

// scanDecimal checks b's syntax (sign, digits, fraction, exponent) and
// collects its first 19 significant digits. Its status is never numOK unless
// all of b is a decimal literal; words pandas reads as NaN or infinity give
// numNotFinite.
func scanDecimal(b []byte) (d decimal, st numStatus) {
	i, n := 0, len(b)
	if b[0] == '+' || b[0] == '-' {
		d.neg = b[0] == '-'
		i++
	}
	i, digits := d.scanDigits(b, i)
	if !digits {
		return d, wordStatus(b)
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		e, j, ok := scanExponent(b, i+1)
		if !ok {
			return d, numBad
		}
		d.exp += e
		i = j
	}
	if i != n {
		return d, wordStatus(b)
	}
	return d, numOK
}

// scanDigits reads the integer and fraction digits from b[i:] into d and
// returns where they end and whether there was any digit.
func (d *decimal) scanDigits(b []byte, i int) (int, bool) {
	n := len(b)
	nd := 0
	digits := false
	for ; i < n && b[i] >= '0' && b[i] <= '9'; i++ {
		digits = true
		v := uint64(b[i] - '0')
		switch {
		case d.mant == 0 && v == 0:
		case nd < 19:
			d.mant = d.mant*10 + v
			nd++
		default:
			d.trunc = true
			d.exp++
		}
	}
	if i < n && b[i] == '.' {
		i++
		for ; i < n && b[i] >= '0' && b[i] <= '9'; i++ {
			digits = true
			v := uint64(b[i] - '0')
			switch {
			case d.mant == 0 && v == 0:
				d.exp--
			case nd < 19:
				d.mant = d.mant*10 + v
				nd++
				d.exp--
			default:
				d.trunc = true
			}
		}
	}
	return i, digits
}

// scanExponent reads an exponent's optional sign and digits from b[i:] (just
// after the 'e'); ok is false if nothing follows. Huge exponents saturate.
func scanExponent(b []byte, i int) (e, end int, ok bool) {
	n := len(b)
	eneg := false
	if i < n && (b[i] == '+' || b[i] == '-') {
		eneg = b[i] == '-'
		i++
	}
	if i >= n {
		return 0, i, false
	}
	for ; i < n && b[i] >= '0' && b[i] <= '9'; i++ {
		if e < 100000 {
			e = e*10 + int(b[i]-'0')
		}
	}
	if eneg {
		e = -e
	}
	return e, i, true
}

// toFloat rounds d correctly to a float64; b is the literal d was scanned
// from, for the slow path.
func (d decimal) toFloat(b []byte) (float64, numStatus) {
	mant, exp, neg, trunc := d.mant, d.exp, d.neg, d.trunc
	if !trunc && mant <= 1<<53 && exp >= -22 && exp <= 22 {
		// Both mant and 10^|exp| are exact, so one multiply or divide rounds
		// correctly (Clinger's fast path).
		f := float64(mant)
		if exp < 0 {
			f /= pow10[-exp]
		} else {
			f *= pow10[exp]
		}
		if neg {
			f = -f
		}
		return f, numOK
	}
	if !trunc && exp < 0 && exp >= -19 {
		if f, ok := divPow10(mant, uint(-exp)); ok {
			if neg {
				f = -f
			}
			return f, numOK
		}
	}
	// The syntax is checked, so strconv sees only a plain decimal literal; it
	// does not keep the string, which lets us skip the copy.
	f, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, numBad
	}
	if math.IsInf(f, 0) {
		return f, numNotFinite
	}
	return f, numOK
}

// naWords are the texts pandas' read_csv turns into NaN or infinity.
var naWords = map[string]bool{
	"nan": true, "-nan": true, "+nan": true, "na": true, "n/a": true, "null": true, "none": true,
	"<na>": true, "#n/a": true, "#na": true, "#n/a n/a": true, "1.#ind": true, "-1.#ind": true,
	"1.#qnan": true, "-1.#qnan": true, "inf": true, "-inf": true, "+inf": true,
	"infinity": true, "-infinity": true, "+infinity": true,
}

func wordStatus(b []byte) numStatus {
	if len(b) <= 9 && naWords[strings.ToLower(string(b))] {
		return numNotFinite
	}
	return numBad
}

// pow10u holds 10^0 .. 10^19, all exact in a uint64.
var pow10u = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// divPow10 returns mant / 10^e rounded to the nearest float64 (ties to even),
// for 1 <= e <= 19, using exact integer division: this covers the 17-digit
// numbers Python's repr writes, which are beyond the fast path above. It
// declines (ok false) for mant 0.
func divPow10(mant uint64, e uint) (float64, bool) {
	if mant == 0 {
		return 0, false
	}
	d := pow10u[e]
	// Normalise both to [2^63, 2^64): the quotient of M·2^64 (or M·2^63)
	// by D then also lies in [2^63, 2^64), and the remainder tells whether
	// anything was cut off.
	lm := bits.LeadingZeros64(mant)
	ld := bits.LeadingZeros64(d)
	m, dd := mant<<lm, d<<ld
	// mant/d = (m/dd)·2^(ld-lm)
	exp2 := ld - lm
	var q, r uint64
	if m < dd {
		q, r = bits.Div64(m, 0, dd) // q·2^-64 = m/dd
		exp2 -= 64
	} else {
		q, r = bits.Div64(m>>1, m<<63, dd) // q·2^-63 = m/dd
		exp2 -= 63
	}
	// Keep 53 of q's 64 bits, rounding half to even; r != 0 means the exact
	// quotient is a little above q.
	low := q & 0x7ff
	q >>= 11
	exp2 += 11
	if low > 0x400 || low == 0x400 && (r != 0 || q&1 == 1) {
		q++
		if q == 1<<53 {
			q >>= 1
			exp2++
		}
	}
	// q is in [2^52, 2^53) and the value q·2^exp2 is at least 1e-19, far
	// from subnormal, so the bits can be assembled directly.
	return math.Float64frombits(uint64(exp2+52+1023)<<52 | q&(1<<52-1)), true
}
