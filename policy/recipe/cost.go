package recipe

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The cost model: how long a plan's program is expected to run on one
// thread, so the prior can avoid plans that would not finish within the
// job's time limit (Profile.TimeLimit). It is deliberately simple:
//
//	seconds   = costOverhead + costFeaturise · featurise + Σ costPerUnit[key] · units · solver
//	featurise = fits · rows · n-gram occurrences per row (text featurisers)
//	units     = fits · rows^a · width · classes · iterations · calibration  (per fitted model)
//	solver    = (classes / 2)^costSolver.classes · C^costSolver.c           (logistic regression)
//	          = (classes / 2)^costSolver.svmClasses                         (linear SVM; else 1)
//
// and for logistic regression width + costSolver.width in place of width,
// and costSolver.vocab · fits · vocabulary · classes more units.
//
// fits is how often the pipeline is fitted (validation: none 1, a holdout
// 1.8, 5-fold 5); rows the training rows read (a = 2, in thousands, for
// the families whose fit grows with rows squared: kernel SVMs, kNN, kernel
// ridge); width the features per row (for text the n-gram occurrences per
// document, see textOccurrences); classes the class count where the
// family fits one model or output per class on more than two; iterations
// the trees or epochs the hyperparameters ask relative to a middle
// setting; calibration 2 (CalibratedClassifierCV's 3 fits on two thirds of
// the rows). A model's seconds are costPerUnit · units · solver: solver is
// how many more iterations lbfgs takes for logistic regression on many
// classes and with weak regularisation (large C), which its work per pass
// does not show; and its width gets costSolver.width added, the work per
// row and class every pass does whatever the row's non-zeros (the
// softmax over the classes), and every pass works on each coefficient,
// the n-gram vocabulary times the classes. An average ensemble adds the second model's units and
// featurises again; pooling naive Bayes adds its word counts. The
// exponents of units are fixed by how the algorithms scale, not fitted;
// costFeaturise, one constant per family (and whether it gets n-grams,
// costKey) and the solver's two exponents are, by least squares on the log
// seconds of the measured programs of the suite and of bench/tuning
// (TestCostFit re-derives them from the committed measurements;
// docs/learning.md, "The prior", has the fit and its error). No held-out
// task was used.

// costOverhead is a program's time before and around the fit (starting
// Python, importing scikit-learn, reading the files, writing the
// submission): about the fastest suite programs' duration.
const costOverhead = 2.0

// costAvoidShare: an option whose plan (completed as Default would) is
// predicted to take more than this share of the time limit is avoided
// (AvoidLogit), unless it is the decision's fastest option. Half, because
// the fit's typical error is a factor of about 1.8 and machines are shared.
const costAvoidShare = 0.5

// costPerUnit are the fitted seconds per unit of work, per model family
// and whether it gets n-gram features (costKey), with the count of suite
// runs each was fitted on (TestCostFit prints this table).
var costPerUnit = map[string]float64{
	"extra_trees":            9.3e-05, // 6 runs
	"extra_trees/text":       1.7e-06, // 5 runs
	"gradient_boosting":      4.8e-06, // 1 runs
	"gradient_boosting/text": 2.2e-05, // 2 runs
	"hist_gb":                4.1e-05, // 42 runs
	"kernel_ridge":           2.5e-06, // 11 runs
	"knn":                    3.8e-07, // 14 runs
	"knn/text":               2.6e-06, // 5 runs
	"linear_svm":             1.1e-07, // 7 runs
	"linear_svm/text":        1.7e-08, // 53 runs
	"logistic":               4.8e-08, // 26 runs
	"logistic/text":          1.2e-07, // 81 runs
	"mlp":                    4.1e-05, // 12 runs
	"mlp/text":               0.00039, // 4 runs
	"naive_bayes":            2.3e-07, // 17 runs
	"naive_bayes/text":       6.5e-08, // 9 runs
	"pls":                    6.3e-10, // 1 runs
	"random_forest":          1.3e-05, // 8 runs
	"random_forest/text":     1.8e-05, // 3 runs
	"ridge":                  1.7e-09, // 28 runs
	"ridge/text":             2.3e-08, // 4 runs
	"svm_rbf":                1.6e-06, // 11 runs
	"svm_rbf/text":           2.6e-05, // 4 runs
	"xgboost":                6e-06,   // 25 runs
	"xgboost/text":           0.00012, // 6 runs
}

// costFeaturise is the fitted seconds per n-gram occurrence a text
// featuriser makes (TestCostFit).
var costFeaturise = 1.1e-06

// squareRows are the families whose fit grows with the square of the rows
// (a kernel matrix, or distances from every predicted row to every training
// row).
var squareRows = map[string]bool{"svm_rbf": true, "knn": true, "kernel_ridge": true}

// perClass are the families that fit one model, tree or output per class
// (one-vs-rest or multinomial): their work grows with the classes.
var perClass = map[string]bool{"logistic": true, "linear_svm": true, "ridge": true,
	"gradient_boosting": true, "xgboost": true}

// predictSeconds is the cost model's one-thread run time of the plan made
// of choices c on p, 0 when it cannot tell (a table of images, whose width
// the profile does not know).
func predictSeconds(p *Profile, c choices) float64 {
	t, ok := planTerms(p, c)
	if !ok {
		return 0
	}
	s := costOverhead + costFeaturise*t.featurise
	for _, m := range t.models {
		s += m.seconds(unitCost(m.key), costSolver)
	}
	return s
}

// costTerms are a plan's units of work: featurise, the n-gram occurrences
// its text featurisers make over all fits (costFeaturise seconds each);
// models, each fitted model's units (costPerUnit[key] seconds each).
type costTerms struct {
	featurise float64
	models    []costModel
}

type costModel struct {
	key   string // costKey
	units float64
	// svm says the solver term's classes exponent is a linear SVM's
	// (one binary problem per class), not logistic regression's.
	svm bool
	// lnClasses and lnC are the logs of the solver term's factors (classes
	// / 2 and C; 0 when they do not apply); perWidth is units per unit of
	// width, for the solver's width, and coefficients the fits times the
	// coefficients (vocabulary × classes), for its vocabulary term (0 when
	// they do not apply).
	lnClasses, lnC, perWidth, coefficients float64
}

// solverTerms are the solver term's fitted constants.
type solverTerms struct{ classes, c, width, vocab, svmClasses float64 }

// seconds is the model's share of the prediction with the given constants.
func (m costModel) seconds(perUnit float64, sv solverTerms) float64 {
	return perUnit * (m.units + sv.width*m.perWidth + sv.vocab*m.coefficients) *
		math.Exp(m.classesExponent(sv)*m.lnClasses+sv.c*m.lnC)
}

// classesExponent is the solver term's exponent of classes / 2 for m.
func (m costModel) classesExponent(sv solverTerms) float64 {
	if m.svm {
		return sv.svmClasses
	}
	return sv.classes
}

// costSolver is the solver term (TestCostFit): lbfgs's iterations for
// logistic regression grow about as (classes / 2)^classes and C^c, each
// pass does width more units per row and class than its non-zeros and
// vocab units per coefficient; a linear SVM's per-class problems take
// (classes / 2)^svmClasses longer. Fitted on fortune-category (bench/tuning)
// beside the suite: the suite alone has no text task of more than 6 classes.
var costSolver = solverTerms{classes: 0.04, c: 0.20, width: 180, vocab: 45, svmClasses: 1.06}

// planTerms are the plan's units of work (see the top of this file); false
// for a table of images.
func planTerms(p *Profile, c choices) (costTerms, bool) {
	if p.HasImages() && typed(c) {
		return costTerms{}, false
	}
	fits := validationFits(c)
	rows := rowsShare(c) * float64(p.TrainRows)
	occ := textOccurrences(p, c)
	t := costTerms{featurise: fits * rows * occ}
	t.models = append(t.models, newCostModel(p, c, c["model.family"], c, fits, rows))
	switch c["ensemble"] {
	case "nb_loglinear": // word 1-2-gram counts for naive Bayes, whose own fit is one pass
		t.featurise += fits * rows * 2 * textWords(p)
	case "average": // the features again, and the second model
		fam := c["ensemble.second"]
		if fam == "linear" {
			fam = map[bool]string{true: "logistic", false: "ridge"}[classifies(p, c)]
		}
		t.featurise += fits * rows * occ
		second := maps.Clone(c)
		second["model.family"] = fam
		t.models = append(t.models, newCostModel(p, second, fam, secondHyper, fits, rows))
	}
	return t, true
}

// newCostModel is family fam's model in plan c with hyperparameters hp,
// fitted fits times on rows rows: its constant's key, its units and, for
// logistic regression and a linear SVM, the solver term's factors.
func newCostModel(p *Profile, c choices, fam string, hp choices, fits, rows float64) costModel {
	m := costModel{key: costKey(p, c), units: fits * modelUnits(p, c, fam, hp, rows), svm: fam == "linear_svm"}
	if fam != "logistic" && fam != "linear_svm" {
		return m
	}
	if k := familyClasses(p, c, fam); k > 2 {
		m.lnClasses = math.Log(k / 2)
	}
	if fam == "linear_svm" {
		return m
	}
	if v, err := parseFloat(hp["logistic.C"]); err == nil && v > 0 {
		m.lnC = math.Log(v)
	}
	// lbfgs stops at max_iter: on fortune-category's grid (bench/tuning)
	// C = 10 took 1.5-1.7 times C = 1's time at max_iter 1000, the same at 100,
	// so a cap of 100 prices a larger C as C = 1.
	if it, err := parseFloat(hp["logistic.max_iter"]); err == nil && it <= 100 {
		m.lnC = min(m.lnC, 0)
	}
	m.perWidth = m.units / planWidth(p, c)
	if rows > 0 {
		m.coefficients = m.perWidth / rows * textVocabulary(p, c, rows)
	}
	return m
}

// textVocabulary is how many n-gram features the plan's text featurisers
// make: features.text_max per vectoriser (two for a word+char union, the
// next power of two for hashing), per text column unless they are joined,
// and at most the n-gram occurrences in the rows read; 0 without text.
func textVocabulary(p *Profile, c choices, rows float64) float64 {
	texts := p.Kinds(KindText)
	if !typed(c) || len(texts) == 0 {
		return 0
	}
	limit, err := parseFloat(c["features.text_max"])
	if err != nil || limit <= 0 {
		return 0
	}
	per := limit
	switch nz := textNonzeros[c["features.text"]]; {
	case c["features.text"] == "hashing":
		per = float64(int(1) << hashingBits(int(limit)))
	case nz.perWord > 0 && nz.perChar > 0:
		per = 2 * limit
	}
	columns := float64(len(texts))
	if c["features.text_columns"] == "joined" {
		columns = 1
	}
	return min(per*columns, rows*textOccurrences(p, c))
}

// modelUnits is one fit of family fam with hyperparameters hp: rows (their
// square for squareRows families, in thousands) × width × classes ×
// iterations, twice that with calibration (three fits on two thirds).
func modelUnits(p *Profile, c choices, fam string, hp choices, rows float64) float64 {
	u := rows * planWidth(p, c) * familyClasses(p, c, fam) * iterations(fam, hp)
	if squareRows[fam] {
		u *= rows / 1000
	}
	if c["calibration"] == "sigmoid" || c["calibration"] == "isotonic" {
		u *= 2
	}
	return u
}

func validationFits(c choices) float64 {
	switch c["validation"] {
	case "holdout":
		return 1.8
	case "cv5":
		return 5
	}
	return 1
}

// familyClasses is the class count for a family that fits one model per
// class on a task of more than two classes, else 1.
func familyClasses(p *Profile, c choices, fam string) float64 {
	if classifies(p, c) && perClass[fam] && len(p.Classes) > 2 {
		return float64(len(p.Classes))
	}
	return 1
}

// iterations is the trees or epochs a family's hyperparameters ask,
// relative to a middle setting (1 for families without such a setting).
func iterations(fam string, c choices) float64 {
	ratio := func(name string, mid float64) float64 {
		v, err := parseFloat(c[name])
		if err != nil || v <= 0 {
			return 1
		}
		return v / mid
	}
	switch fam {
	case "random_forest", "extra_trees":
		return ratio("forest.n_estimators", 200)
	case "hist_gb":
		return ratio("hgb.max_iter", 300)
	case "gradient_boosting":
		return ratio("gb.n_estimators", 100)
	case "xgboost":
		return ratio("xgb.n_estimators", 400)
	case "mlp":
		hidden := map[string]float64{"64": 0.25, "256": 1, "256_128": 1.5}[c["mlp.hidden"]]
		return ratio("mlp.max_iter", 200) * cmp.Or(hidden, 1)
	case "kernel_ridge":
		if c["kernel_ridge.alpha"] == "cv" || c["kernel_ridge.gamma"] == "cv" {
			return 30 // a 5-fold grid search of about 6 values
		}
	}
	return 1
}

// textNonzeros are the n-gram occurrences per document each text
// featuriser makes, per word and per character of the text: word
// unigrams one per word, word uni- and bigrams two, character 2-5-grams
// (char_wb) four per character, 1-5-grams five.
var textNonzeros = map[string]struct{ perWord, perChar float64 }{
	"tfidf_word":            {1, 0},
	"tfidf_word_1_2":        {2, 0},
	"tfidf_char":            {0, 4},
	"counts":                {1, 0},
	"hashing":               {1, 0},
	"tfidf_word_char":       {2, 4},
	"tfidf_word_char_cased": {2, 5},
}

// planWidth is the features per row the model sees: for text the n-gram
// occurrences per document (what a sparse fit touches; at most the
// vocabulary), for the other columns one per numeric column, one per
// one-hot level, six per date.
func planWidth(p *Profile, c choices) float64 {
	if !notRaw(c) {
		return float64(len(p.Columns) - 1 - len(p.TrainTargets))
	}
	var width float64
	for _, col := range p.Columns {
		switch col.Kind {
		case KindNumeric:
			width++
		case KindDate:
			if c["features.dates"] != "drop" {
				width += 6
			}
		case KindCategorical:
			if !typed(c) {
				continue
			}
			enc := c["features.categorical"]
			if col.HighCardinality {
				enc = c["features.high_card"]
			}
			switch enc {
			case "onehot", "get_dummies", "onehot_grouped":
				width += float64(max(col.Unique, 1))
			case "drop":
			default:
				width++
			}
		}
	}
	width += textOccurrences(p, c)
	if s := c["features.series"]; s == "savgol" {
		width *= 3
	}
	return max(width, 1)
}

// textOccurrences are the n-gram occurrences per row the plan's text
// featurisers make (textNonzeros), at most the vocabulary; 0 without text.
func textOccurrences(p *Profile, c choices) float64 {
	if !typed(c) {
		return 0
	}
	var occ float64
	for _, col := range p.Columns {
		if col.Kind != KindText {
			continue
		}
		nz := textNonzeros[c["features.text"]]
		o := nz.perWord*max(col.MeanWords, 1) + nz.perChar*col.MeanLen
		if v, err := parseFloat(c["features.text_max"]); err == nil && v > 0 {
			if nz.perChar > 0 && nz.perWord > 0 {
				v *= 2 // two vocabularies of text_max each
			}
			o = min(o, v)
		}
		occ += o
	}
	return occ
}

// textWords are the words per row over the text columns.
func textWords(p *Profile) float64 {
	var w float64
	for _, col := range p.Columns {
		if col.Kind == KindText {
			w += max(col.MeanWords, 1)
		}
	}
	return w
}

// costLevers are the feature decisions the cost model may steer: those
// that set how wide the matrix is. The model, its hyperparameters,
// validation and ensembling are levers too (costLever). Reading fewer
// rows is not: it would buy time with the score the prior should keep.
var costLevers = map[string]bool{"features.text": true, "features.text_max": true,
	"features.categorical": true, "features.high_card": true, "features.series": true}

func costLever(id int) bool {
	s := grammar[id]
	return id != 0 && (s.part != PartFeatures || costLevers[s.name])
}

// costAvoid lists the options of decision d (at walker w's position) whose
// plan is predicted to take more than costAvoidShare of the profile's time
// limit when completed as the prior most expects, but with the cheapest
// validation and ensembling (see completion): an option is avoided only
// when the plan it leads to is slow for reasons still to come the prior
// would not fix for free. The decision's fastest option among those not
// already avoided (avoid) is never listed, so the prior keeps a way
// forward.
func (w *Walker) costAvoid(d Decision, avoid []int) []int {
	limit := w.p.TimeLimit.Seconds() * costAvoidShare
	if limit <= 0 || !costLever(d.ID) {
		return nil
	}
	secs := make([]float64, len(d.Options))
	fastest := math.Inf(1)
	for i, o := range d.Options {
		secs[i] = predictSeconds(w.p, w.completion(d, o))
		if !slices.Contains(avoid, i) || len(avoid) == len(d.Options) {
			fastest = min(fastest, secs[i])
		}
	}
	var out []int
	for i, s := range secs {
		if s > limit && s > fastest {
			out = append(out, i)
		}
	}
	return out
}

// completion is the plan w would make if it took option o at d and then
// every later decision as the prior most expects (the parent's value in an
// improve walk where it has one, else Default's), except that validation
// and ensembling, which cost time and change the fitted model little or
// not at all, take none.
func (w *Walker) completion(d Decision, o string) choices {
	if w.prefs == nil {
		w.prefs = defaultsFor(w.p)
	}
	v := &Walker{p: w.p, parent: w.parent, part: w.part, pos: w.pos, chosen: maps.Clone(w.chosen), prefs: w.prefs, noCost: true}
	v.set(d.Name, o)
	v.pos++
	for n, ok := v.Next(); ok; n, ok = v.Next() {
		i := v.prefs.option(n)
		if pv, has := v.parent[n.Name]; has && slices.Contains(n.Options, pv) {
			i = slices.Index(n.Options, pv)
		}
		if (n.Name == "validation" || n.Name == "ensemble") && slices.Contains(n.Options, "none") {
			i = slices.Index(n.Options, "none")
		}
		_ = v.Choose(i)
	}
	return v.chosen
}

// SetTimeLimit tells the policy the wall-clock limit its programs will run
// under (the job's timeout); 0 turns the cost model's avoidance off. The
// prior then avoids options whose plan the cost model predicts to take
// more than half of it.
func (p *Policy) SetTimeLimit(d time.Duration) {
	for _, prof := range p.profiles {
		prof.TimeLimit = d
	}
}

// parseFloat reads a numeric option value.
func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// unitCost is costPerUnit[key], else the family's constant on other
// features (a family the suite measured only without text), else 0: a
// family the suite never ran (ordinary least squares) is not priced.
func unitCost(key string) float64 {
	if v, ok := costPerUnit[key]; ok {
		return v
	}
	return costPerUnit[strings.TrimSuffix(key, "/text")]
}

// costKey names a plan's constant in costPerUnit: the model family, and
// "/text" when the model gets n-gram features (a sparse matrix, where a
// unit of width is a non-zero, not a column).
func costKey(p *Profile, c choices) string {
	if typed(c) && p.HasText() {
		return c["model.family"] + "/text"
	}
	return c["model.family"]
}
