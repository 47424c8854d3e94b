package grade

import "testing"

// TestFamilyOf: every metric has a family that agrees with what the grader
// enforces (its value kind, its number of target columns, its direction),
// and no family names a metric the grader does not know.
func TestFamilyOf(t *testing.T) {
	for _, m := range metricTable {
		f, err := FamilyOf(m.name)
		if err != nil {
			t.Fatalf("FamilyOf(%s): %v", m.name, err)
		}
		if f.Metric != m.name || f.LowerIsBetter != m.lowerIsBetter {
			t.Errorf("%s: family %+v disagrees with the metric table's name or direction", m.name, f)
		}
		if (m.kind == kindString) != (f.Prediction == Label || f.Prediction == Text) || (m.kind == kindInt) != f.Ordinal() {
			t.Errorf("%s: prediction %s does not fit the graded value kind %d", m.name, f.Prediction, m.kind)
		}
		if m.singleTarget != (f.Columns == OneColumn) || (m.minTargets > 1) != (f.Columns == ColumnPerClass) {
			t.Errorf("%s: columns %s do not fit singleTarget=%v minTargets=%d", m.name, f.Columns, m.singleTarget, m.minTargets)
		}
		if f.Probabilities() && f.Problem != Classification || f.Note == "" {
			t.Errorf("%s: family %+v", m.name, f)
		}
	}
	if len(metricFamilies) != len(metricTable) {
		t.Errorf("%d families for %d metrics", len(metricFamilies), len(metricTable))
	}
	if _, err := FamilyOf("f1"); err == nil {
		t.Error("FamilyOf(f1) has no error")
	}
}
