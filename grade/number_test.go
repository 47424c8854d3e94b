package grade

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		st   numStatus
	}{
		{"0", 0, numOK}, {"-0", math.Copysign(0, -1), numOK}, {"1", 1, numOK}, {" 2.5\t", 2.5, numOK},
		{".5", 0.5, numOK}, {"5.", 5, numOK}, {"+1e3", 1000, numOK}, {"1E-3", 0.001, numOK},
		{"0.1", 0.1, numOK}, {"0.30000000000000004", 0.30000000000000004, numOK},
		{"0.99999999999999994", 0.99999999999999994, numOK}, {"1.0000000000000001", 1, numOK},
		{"123456789012345678901234567890", 1.2345678901234568e29, numOK},
		{"4.9406564584124654e-324", 5e-324, numOK}, {"1e400", math.Inf(1), numNotFinite},
		{"", 0, numEmpty}, {"  ", 0, numEmpty}, {"nan", 0, numNotFinite}, {"-Infinity", 0, numNotFinite},
		{"NULL", 0, numNotFinite}, {"abc", 0, numBad}, {"1.2.3", 0, numBad}, {"1e", 0, numBad},
		{"e5", 0, numBad}, {"0x10", 0, numBad}, {"1_000", 0, numBad}, {"+", 0, numBad}, {".", 0, numBad},
		{"1 2", 0, numBad}, {"--1", 0, numBad},
	}
	for _, tc := range tests {
		got, st := parseNumber([]byte(tc.in))
		if st != tc.st || st == numOK && (got != tc.want || math.Signbit(got) != math.Signbit(tc.want)) {
			t.Errorf("parseNumber(%q) = %v, %v; want %v, %v", tc.in, got, st, tc.want, tc.st)
		}
	}
}

// TestParseNumberMatchesStrconv checks correct rounding on the shapes
// submissions contain, against strconv.ParseFloat (correctly rounded).
func TestParseNumberMatchesStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(s string) {
		t.Helper()
		want, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("strconv rejects %q: %v", s, err)
		}
		got, st := parseNumber([]byte(s))
		if st != numOK || got != want {
			t.Fatalf("parseNumber(%q) = %v (%b), %v; strconv %v (%b)", s, got, math.Float64bits(got), st, want, math.Float64bits(want))
		}
	}
	for i := 0; i < 300000; i++ {
		f := rng.Float64() * math.Pow(10, float64(rng.IntN(12)-6))
		check(strconv.FormatFloat(f, 'g', -1, 64))
		check(strconv.FormatFloat(f, 'f', rng.IntN(20), 64))
		// Random digit strings, including halfway cases' neighbourhoods.
		m := rng.Uint64() >> rng.IntN(12)
		check(strconv.FormatUint(m, 10)[:1] + "." + strconv.FormatUint(m, 10)[1:])
		check("0." + strconv.FormatUint(m, 10))
	}
	// Exact ties, rounded to even, through the integer-division path.
	for _, s := range []string{"9007199254740993.0", "9007199254740995.0", "18014398509481986.0", "18014398509481990.00",
		"0.9007199254740993", "1.152921504606846977", "0.0000000000000000001", "9999999999999999999e-19"} {
		check(s)
	}
	// Exact halfway points between adjacent float64s, and their neighbours.
	for i := 0; i < 20000; i++ {
		f := rng.Float64()
		next := math.Nextafter(f, 2)
		mid := strconv.FormatFloat(f, 'e', 40, 64) // enough digits to pass the midpoint region
		check(mid)
		check(strconv.FormatFloat((f+next)/2, 'f', 19, 64))
	}
}

// FuzzParseNumber: every number parseNumber accepts is exactly what strconv
// (correctly rounded) reads from the same text.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0.1", "1e5", " -2.5 ", "0.30000000000000004", "9007199254740993.0", "1.#IND", "nan"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, st := parseNumber([]byte(s))
		if st != numOK {
			return
		}
		want, err := strconv.ParseFloat(strings.Trim(s, " \t"), 64)
		if err != nil || got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("parseNumber(%q) = %v; strconv %v, %v", s, got, want, err)
		}
	})
}
