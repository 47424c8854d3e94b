package recipe

import (
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/mlerl/mlerl/grade"
)

// Render writes plan pl for the task p as a Python program. The program runs
// with data/ holding the public files, writes ./submission.csv and uses at most
// two threads. Its main steps are plain top-level statements (train =
// pd.read_csv(...), estimator = XGBClassifier(...), model.fit(X, y), proba =
// model.predict_proba(X_test)) so the AST instrumenter can find them.
//
// The first line is "# plan: KEY" with the plan's Key, the same string a
// replay table (rl/replay) keys its recorded outcomes by, so a replay Env
// recognises the program's plan without parsing it (replay.KeyOf).
//
// The program's body is python/*.tmpl, section by section; the renderer's
// methods work out the expressions the templates put in it.
func Render(p *Profile, pl *Plan) (string, error) {
	if p == nil || len(p.TrainTargets) == 0 || p.IDColumn == "" || p.TargetKind == "" {
		return "", fmt.Errorf("recipe: render: profile without id column, targets or target kind (use NewProfile)")
	}
	if err := pl.Validate(p); err != nil {
		return "", fmt.Errorf("recipe: render %s: %w", p.Name, err)
	}
	r := &renderer{P: p, c: pl.choiceMap(), imports: map[string]map[string]bool{}}
	r.Cls = classifies(p, r.c)
	r.OrdReg = p.IsClassification() && !r.Cls
	r.Multi = p.TargetKind == MultiOutput
	r.metric = p.family()
	r.use("", "numpy as np")
	r.use("", "pandas as pd")
	var body strings.Builder
	if err := templates.ExecuteTemplate(&body, "program", r); err != nil {
		return "", fmt.Errorf("recipe: render %s: %w", p.Name, err)
	}
	var out strings.Builder
	out.WriteString(PlanLine(pl))
	out.WriteString(r.docstring(pl))
	out.WriteString(threadSetup)
	out.WriteString(r.importBlock())
	out.WriteString("\n")
	for _, l := range strings.SplitAfter(body.String(), "\n") {
		out.WriteString(strings.TrimRight(l, " \n"))
		if strings.HasSuffix(l, "\n") {
			out.WriteByte('\n')
		}
	}
	return out.String(), nil
}

// threadSetup follows the docstring of every program.
const threadSetup = `import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

`

// PlanLine is a rendered program's first line: "# plan: " and the plan's key.
func PlanLine(pl *Plan) string { return "# plan: " + pl.Key() + "\n" }

//go:embed python/*.tmpl
var templateFiles embed.FS

// templates are python/*.tmpl, parsed once.
var templates = parseTemplates()

// silentLine matches a template line that holds nothing but one action
// writing no text of its own (if, else, end, range, define, template, a
// variable declaration, a comment or .Use), with its newline.
var silentLine = regexp.MustCompile(`(?m)^[ \t]*(\{\{(?:(?:if|else|end|range|with|define|block|template)\b|\$\w+ :=|\.Use\b|/\*)[^{}\n]*\}\})[ \t]*\n`)

// parseTemplates drops the newline of every silent line before parsing, so a
// template reads as the Python it writes, with its control lines between.
func parseTemplates() *template.Template {
	t := template.New("python").Funcs(template.FuncMap{"py": py, "pyList": pyList})
	names, err := templateFiles.ReadDir("python")
	if err != nil {
		panic(err)
	}
	for _, e := range names {
		src, err := templateFiles.ReadFile("python/" + e.Name())
		if err != nil {
			panic(err)
		}
		template.Must(t.New(e.Name()).Parse(silentLine.ReplaceAllString(string(src), "$1")))
	}
	return t
}

// renderer is what the templates see: the task, the plan's choices and what
// follows from them. Its exported methods are for the templates.
type renderer struct {
	P       *Profile
	Cls     bool // the plan predicts classes (see classifies)
	OrdReg  bool // an ordinal target learned as a number and rounded
	Multi   bool // several numeric targets
	metric  grade.Family
	c       choices
	imports map[string]map[string]bool // module -> names; "" -> plain "import x"
}

func (r *renderer) use(module string, names ...string) {
	if r.imports[module] == nil {
		r.imports[module] = map[string]bool{}
	}
	for _, n := range names {
		r.imports[module][n] = true
	}
}

// Use imports names from module for the program; it writes nothing.
func (r *renderer) Use(module string, names ...string) string {
	r.use(module, names...)
	return ""
}

// Is says the plan chose value for decision name.
func (r *renderer) Is(name, value string) bool { return r.c[name] == value }

// Get is the plan's value for decision name ("" when it has none).
func (r *renderer) Get(name string) string { return r.c[name] }

// Raw says the model gets every column as it comes, without preprocessing.
func (r *renderer) Raw() bool { return r.c["features.columns"] == "raw" }

// HasImages says the features include the task's images.
func (r *renderer) HasImages() bool {
	return r.c["features.columns"] == "typed" && r.P.HasImages()
}

// HasSeries says an ordered series is transformed (features.series).
func (r *renderer) HasSeries() bool {
	mode := r.c["features.series"]
	return mode != "" && mode != "none"
}

// Ensemble says a second model's predictions are averaged with the first's.
func (r *renderer) Ensemble() bool { return r.c["ensemble"] == "average" }

// Pooled says naive Bayes on word counts is pooled with the model's
// probabilities (ensemble=nb_loglinear).
func (r *renderer) Pooled() bool { return r.c["ensemble"] == "nb_loglinear" }

// HasSecond says a second model is fitted beside the first.
func (r *renderer) HasSecond() bool { return r.Ensemble() || r.Pooled() }

// NeedsProba says predictions are made through predict_proba: probability
// metrics, and combining two classifiers.
func (r *renderer) NeedsProba() bool {
	return r.Cls && (r.P.NeedsProba() || r.HasSecond())
}

// ScoresOnly says the model has no predict_proba as rendered (LinearSVC,
// RidgeClassifier, not calibrated) where probabilities are needed: a plan
// that pools or averages it with a second model, or a probability metric.
// Its decision scores are turned into probabilities instead. Before, such a
// program crashed, and an improve edit of a pooled parent to one of these
// families always did (it keeps the parent's ensemble): a crash no choice
// could learn around (issue 10).
func (r *renderer) ScoresOnly() bool {
	cal := r.c["calibration"]
	return r.NeedsProba() && !families[r.c["model.family"]].hasPredictProb && cal != "sigmoid" && cal != "isotonic"
}

// FamilyName is the model family's class name, as the program constructs it.
func (r *renderer) FamilyName() string { return families[r.c["model.family"]].classifier }

// SubmitsPositive says the submission is the positive class's probability (auc).
func (r *renderer) SubmitsPositive() bool {
	return r.metric.Probabilities() && r.metric.Columns == grade.OneColumn
}

// PerClassColumns says the submission has one probability column per class (log_loss).
func (r *renderer) PerClassColumns() bool { return r.metric.Columns == grade.ColumnPerClass }

// LogScale says the metric compares log(1 + value), so predictions are
// clipped at zero.
func (r *renderer) LogScale() bool { return r.metric.LogScale }

// PLSColumn says the model is PLS predicting one target, as a column.
func (r *renderer) PLSColumn() bool { return r.c["model.family"] == "pls" && !r.Multi }

// TextColumns are the text columns the model reads: the task's, or the one
// column joining them (features.text_columns=joined).
func (r *renderer) TextColumns() []string {
	if r.c["features.text_columns"] == "joined" {
		return []string{"joined_text"}
	}
	return r.P.Kinds(KindText)
}

// ImageColumn is the column naming each row's image file.
func (r *renderer) ImageColumn() string { return r.P.Kinds(KindImage)[0] }

// Exclude is the Python list of the columns that are not features.
func (r *renderer) Exclude() string {
	if r.Multi {
		return "[ID_COLUMN] + TARGETS"
	}
	return "[ID_COLUMN, TARGET]"
}

// Read is the call that reads the CSV file at path with the plan's loader.
func (r *renderer) Read(path string) string {
	switch r.c["read.loader"] {
	case "sniff":
		return fmt.Sprintf(`pd.read_csv(%s, sep=None, engine="python")`, py(path))
	case "ascii":
		return fmt.Sprintf(`pd.read_csv(%s, encoding="ascii")`, py(path))
	case "semicolon":
		return fmt.Sprintf(`pd.read_csv(%s, sep=";")`, py(path))
	}
	return fmt.Sprintf("pd.read_csv(%s)", py(path))
}

// imageMode is how load_images reads pixels.
type imageMode struct {
	Mode  string // PIL's mode: "L" or "RGB"
	Scale string // the Python suffix scaling the pixels ("" for raw values)
	What  string // the words for the docstring
}

// Image is how features.image reads the pictures.
func (r *renderer) Image() imageMode {
	switch r.c["features.image"] {
	case "gray_raw":
		return imageMode{"L", "", "grayscale, raw 0-255 values"}
	case "rgb_scaled":
		return imageMode{"RGB", " / 255.0", "three colour channels, scaled to [0, 1]"}
	}
	return imageMode{"L", " / 255.0", "grayscale, scaled to [0, 1]"}
}

// seriesMode is the transformation of an ordered series.
type seriesMode struct {
	Stem string // the columns' common prefix
	Mode string // features.series
	What string // the words for the docstring
}

// seriesWhat says what each features.series option replaces a row's series by.
var seriesWhat = map[string]string{
	"diff1":     "its first differences (removes baseline shifts)",
	"diff2":     "its second differences (removes baseline shifts and slopes)",
	"snv_diff1": "the first differences of the row centred and scaled to unit variance (standard normal variate: removes scatter and baseline shifts)",
	"savgol":    "the series itself plus its Savitzky-Golay smoothed first and second derivatives (window 11, quadratic)",
}

// Series is the ordered series and what the plan does with it.
func (r *renderer) Series() seriesMode {
	stem, _ := r.P.Series()
	mode := r.c["features.series"]
	return seriesMode{Stem: stem, Mode: mode, What: seriesWhat[mode]}
}

// Predict writes the "predict" template for features xVar and result out,
// indented by indent levels of 4 spaces, without a final newline.
func (r *renderer) Predict(indent int, xVar, out string) (string, error) {
	var b strings.Builder
	data := struct {
		R      *renderer
		X, Out string
	}{r, xVar, out}
	if err := templates.ExecuteTemplate(&b, "predict", data); err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	pad := strings.Repeat("    ", indent)
	for i := range lines {
		lines[i] = pad + lines[i]
	}
	return strings.Join(lines, "\n"), nil
}

// Split is the cross-validation splitter's class: stratified for classes.
func (r *renderer) Split() string {
	split := "KFold"
	if r.Cls {
		split = "StratifiedKFold"
	}
	r.use("sklearn.model_selection", split)
	return split
}

func (r *renderer) docstring(pl *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"Solution for task %s (metric: %s, %s).\n\n", r.P.Name, r.P.Metric, grade.Direction(r.metric.LowerIsBetter))
	b.WriteString(wrap(pl.describe(), 88))
	b.WriteString("\n\nPlan key: ")
	b.WriteString(wrap(strings.ReplaceAll(pl.Key(), ";", "; "), 88))
	b.WriteString("\n\"\"\"\n")
	return b.String()
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(s string, width int) string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return strings.Join(lines, "\n")
}

// importBlock is plain imports, then from-imports, each sorted.
func (r *renderer) importBlock() string {
	var plain, from []string
	for mod, names := range r.imports {
		ns := make([]string, 0, len(names))
		for n := range names {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		if mod == "" {
			for _, n := range ns {
				plain = append(plain, "import "+n)
			}
			continue
		}
		from = append(from, "from "+mod+" import "+strings.Join(ns, ", "))
	}
	sort.Strings(plain)
	sort.Strings(from)
	return strings.Join(plain, "\n") + "\n" + strings.Join(from, "\n") + "\n"
}

func py(s string) string { return strconv.Quote(s) }

func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = py(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
