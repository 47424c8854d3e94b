package recipe

import (
	"fmt"
	"strings"
)

// Describe is the plan in 3-5 English sentences, without task context.
func (pl *Plan) Describe() string { return pl.describe() }

func (pl *Plan) describe() string {
	c := pl.choiceMap()
	s := []string{describeReading(c), describeFeatures(c), describeModel(c)}
	if e := describeEnsemble(c); e != "" {
		s = append(s, e)
	}
	return strings.Join(append(s, describeValidation(c)), " ")
}

// describeWords are the words for option values, per decision.
var describeWords = map[string]map[string]string{
	"read.loader": {
		"default": "with pandas' default settings", "sniff": "with pandas' python engine sniffing the separator",
		"ascii": "as ASCII text", "semicolon": "with ';' as the separator",
	},
	"read.rows": {"all": "all training rows", "half": "a random half of the training rows", "fifth": "a random fifth of the training rows"},
	"features.missing": {
		"none": "leaving missing values as they are", "drop_rows": "dropping training rows with missing values",
		"mean": "imputing missing values with the mean", "median": "imputing missing values with the median",
		"most_frequent": "imputing missing values with the most frequent value",
	},
	"features.categorical": {
		"onehot": "one-hot encode categorical columns", "get_dummies": "one-hot encode categorical columns with pandas' get_dummies on each file",
		"ordinal": "encode categorical columns as integers", "drop": "drop categorical columns",
	},
	"features.text": {
		"tfidf_word": "TF-IDF word unigrams", "tfidf_word_1_2": "TF-IDF word unigrams and bigrams",
		"tfidf_char": "TF-IDF character 2-5-grams", "counts": "word counts", "hashing": "hashed word counts",
		"tfidf_word_char":       "TF-IDF word 1-2-grams and character 2-5-grams side by side",
		"tfidf_word_char_cased": "case-sensitive TF-IDF word 1-2-grams and character 1-5-grams side by side",
	},
	"features.series": {
		"diff1":     "replace the ordered series columns by their first differences",
		"diff2":     "replace the ordered series columns by their second differences",
		"snv_diff1": "replace the ordered series columns by first differences of each row standardised (SNV)",
		"savgol":    "add Savitzky-Golay first and second derivatives of the ordered series columns",
	},
	"features.text_columns": {"per_column": "each text column with its own vocabulary", "joined": "the text columns joined into one"},
	"features.dates":        {"parts": "turn dates into year, month, day, weekday, hour and days since 1970", "drop": "drop date columns"},
	"features.high_card": {
		"onehot_grouped": "one-hot encode many-level categorical columns with levels under 5 rows grouped",
		"target_mean":    "encode many-level categorical columns by the out-of-fold mean target per level",
		"ordinal":        "encode many-level categorical columns as integers", "drop": "drop many-level categorical columns",
	},
	"features.image": {
		"gray_scaled": "read images as grayscale pixels in [0, 1]", "gray_raw": "read images as raw grayscale pixel values",
		"rgb_scaled": "read images as RGB pixels in [0, 1]",
	},
}

func describeReading(c choices) string {
	return fmt.Sprintf("Read the CSV files %s and train on %s.",
		describeWords["read.loader"][c["read.loader"]], describeWords["read.rows"][c["read.rows"]])
}

func describeFeatures(c choices) string {
	if c["features.columns"] == "raw" {
		return "Give the model every column as it comes, without preprocessing."
	}
	what := "Use the numeric columns"
	if c["features.columns"] == "numeric_only" {
		what = "Use only the numeric columns"
	}
	f := []string{what + " (" + describeWords["features.missing"][c["features.missing"]] + ")"}
	if v := c["features.categorical"]; v != "" {
		f = append(f, describeWords["features.categorical"][v])
	}
	if v := c["features.text"]; v != "" {
		text := fmt.Sprintf("turn text into %s (at most %s features)", describeWords["features.text"][v], c["features.text_max"])
		if w := c["features.text_columns"]; w != "" {
			text += ", " + describeWords["features.text_columns"][w]
		}
		f = append(f, text)
	}
	for _, d := range []string{"features.dates", "features.high_card"} {
		if v := c[d]; v != "" {
			f = append(f, describeWords[d][v])
		}
	}
	if v := c["features.series"]; v != "" && v != "none" {
		f = append(f, describeWords["features.series"][v])
	}
	if v := c["features.image"]; v != "" {
		f = append(f, describeWords["features.image"][v])
	}
	if c["features.scaling"] == "standard" {
		f = append(f, "standardise the features")
	}
	return joinClauses(f) + "."
}

func describeModel(c choices) string {
	fam := c["model.family"]
	m := "Train " + article(families[fam].describe) + " " + families[fam].describe + " model" + hyperText(fam, c)
	if c["model.multioutput"] == "per_target" {
		m += ", one per target"
	}
	if v := c["calibration"]; v == "sigmoid" || v == "isotonic" {
		m += ", with " + v + " probability calibration"
	}
	if c["target.transform"] == "log1p" {
		m += ", on log(1 + target)"
	}
	if c["target.ordinal"] == "regression" {
		m += ", as a regression on the class number with rounded predictions"
	}
	return m + "."
}

// describeEnsemble is "" for a plan without a second model.
func describeEnsemble(c choices) string {
	switch c["ensemble"] {
	case "average":
		second := c["ensemble.second"]
		name := "a linear model"
		if second != "linear" {
			name = article(families[second].describe) + " " + families[second].describe + " model"
		}
		return "Average its predictions with those of " + name + "."
	case "nb_loglinear":
		return "Pool its class probabilities log-linearly with those of a multinomial naive Bayes model on word 1-2-gram counts (weight " + c["ensemble.nb_weight"] + ")."
	}
	return ""
}

func describeValidation(c choices) string {
	switch c["validation"] {
	case "holdout":
		return "Print a score on a 20% holdout, then refit on all rows and write submission.csv."
	case "cv5":
		return "Print a 5-fold cross-validated score, then refit on all rows and write submission.csv."
	}
	return "Skip validation and write submission.csv."
}

func joinClauses(f []string) string {
	switch len(f) {
	case 0:
		return ""
	case 1:
		return f[0]
	}
	return strings.Join(f[:len(f)-1], ", ") + " and " + f[len(f)-1]
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiouAEIOUX", rune(w[0])) { // "an XGBoost": said "ex"
		return "an"
	}
	return "a"
}

func hyperText(fam string, c choices) string {
	hp := familyHyper[fam]
	if len(hp) == 0 {
		return ""
	}
	if fam == "naive_bayes" {
		return " (" + c["nb.variant"] + ")"
	}
	var parts []string
	for _, h := range hp {
		name := strings.ReplaceAll(h[strings.IndexByte(h, '.')+1:], "_", " ")
		if c[h] == "cv" {
			parts = append(parts, name+" chosen by 5-fold cross-validation")
			continue
		}
		parts = append(parts, name+" "+c[h])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
