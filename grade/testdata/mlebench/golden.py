"""Writes the golden cases of grade's MLE-bench rule sets, and grades them
with MLE-bench's own grade.py files.

    /usr/bin/python3 golden.py MLEBENCH_SRC

MLEBENCH_SRC is a directory holding MLE-bench's `mlebench/` package (a
checkout, or `git archive HEAD mlebench | tar -x -C DIR`). For each
competition this writes <id>/answers.csv and <id>/<case>.csv (small files made
up here, in the competition's format) and <id>/expected.json:

    {"<case>": {"valid": bool, "score": float|null, "rounded": float|null, "error": str}}

The grading is MLE-bench's: both files read with mlebench.utils.read_csv
(pandas, float_precision="round_trip"), then the competition's grade(). Any
exception means invalid, as in MLE-bench's Grader. A NaN score is recorded as
invalid too ("nan score"): mlerl cannot reward or rank a NaN.

MLE-bench requires scikit-learn >= 1.5 and pandas >= 2.2. Debian's python3
has older ones, so before the graders are imported this script replaces the
two scikit-learn functions whose behaviour changed with numpy code that does
what the newer versions do (log_loss: clip at float64 epsilon, no
renormalisation; root_mean_squared_log_error, added in 1.4: values <= -1 are
rejected, as in scikit-learn >= 1.6; root_mean_squared_error, added in 1.4).
Cases avoid what differs between pandas
1.5 and 2.2 (the NA word "None"). MLE-bench's optional imports that the
graders never use (tqdm, py7zr) are stubbed.
"""

import csv
import importlib
import io
import json
import math
import os
import sys
import types

import numpy as np
import pandas as pd
import sklearn.metrics
from scipy.special import xlogy
from sklearn.utils import check_array

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- scikit-learn >= 1.5 behaviour on Debian's older scikit-learn ----

def log_loss_15(y_true, y_pred, **kwargs):
    y_pred = check_array(y_pred, ensure_2d=False, dtype=[np.float64, np.float32, np.float16])
    y_true = np.asarray(y_true)
    if y_true.ndim == 1:  # binary labels and one probability column, as scikit-learn expands them
        if len(y_true) != len(y_pred):
            raise ValueError("inconsistent numbers of samples")
        classes = np.unique(y_true)
        if len(classes) != 2:
            raise ValueError("y_true needs two labels")
        y_true = np.stack([y_true != classes[1], y_true == classes[1]], axis=1).astype(int)
        y_pred = np.stack([1 - y_pred, y_pred], axis=1)
    if y_true.ndim != 2 or y_pred.ndim != 2 or y_true.shape != y_pred.shape:
        raise ValueError("shapes differ")
    if not np.isin(y_true, [0, 1]).all():
        raise ValueError("y_true is not one-hot")
    eps = np.finfo(y_pred.dtype).eps
    p = np.clip(y_pred, eps, 1 - eps)
    return float(np.average(-xlogy(y_true, p).sum(axis=1)))


def rmsle_16(y_true, y_pred, **kwargs):
    y_true = check_array(np.asarray(y_true).reshape(-1, 1), dtype="numeric")
    y_pred = check_array(np.asarray(y_pred).reshape(-1, 1), dtype="numeric")
    if (y_true <= -1).any() or (y_pred <= -1).any():
        raise ValueError("Root Mean Squared Logarithmic Error cannot be used when targets "
                         "contain values less than or equal to -1.")
    return float(np.sqrt(sklearn.metrics.mean_squared_error(np.log1p(y_true), np.log1p(y_pred))))


def rmse_14(y_true, y_pred, **kwargs):
    return float(np.sqrt(sklearn.metrics.mean_squared_error(y_true, y_pred)))


sklearn.metrics.log_loss = log_loss_15
sklearn.metrics.root_mean_squared_log_error = rmsle_16
sklearn.metrics.root_mean_squared_error = rmse_14  # added in scikit-learn 1.4
for name in ("tqdm", "tqdm.auto", "py7zr"):
    mod = types.ModuleType(name)
    mod.tqdm = lambda x=None, *a, **k: x
    sys.modules.setdefault(name, mod)


# ---- writing cases ----

def table(header, rows):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(r)
    return out.getvalue()


def fmt(v):
    return repr(float(v)) if isinstance(v, float) else str(v)


def cases_auc(id_col, target, ids, labels, extra=None):
    """Cases every prepare_for_auroc_metric competition shares."""
    n = len(ids)
    rng = np.random.default_rng(len(ids))
    probs = [round(float(0.15 + 0.6 * y + 0.2 * rng.random()), 4) for y in labels]
    order = list(rng.permutation(n))
    c = {}
    c["ok_in_order"] = table([id_col, target], [[ids[i], probs[i]] for i in range(n)])
    c["ok_shuffled"] = table([id_col, target], [[ids[i], probs[i]] for i in order])
    c["ok_target_first"] = table([target, id_col], [[probs[i], ids[i]] for i in order])
    c["ok_extra_column"] = table([id_col, target, "note"], [[ids[i], probs[i], "x"] for i in range(n)])
    c["ok_all_ties"] = table([id_col, target], [[i, 0] for i in ids])
    c["ok_integers"] = table([id_col, target], [[ids[i], labels[i] if i % 3 else 1 - labels[i]] for i in range(n)])
    c["ok_bool_words"] = table([id_col, target], [[ids[i], "True" if labels[i] else "False"] for i in range(n)])
    c["ok_spaces_around_numbers"] = table([id_col, target], [[ids[i], " %s " % probs[i]] for i in range(n)])
    c["bad_missing_target"] = table([id_col], [[i] for i in ids])
    c["bad_missing_id"] = table([target], [[p] for p in probs])
    c["bad_above_one"] = table([id_col, target], [[ids[i], 1.2 if i == 1 else probs[i]] for i in range(n)])
    c["bad_negative"] = table([id_col, target], [[ids[i], -0.01 if i == 2 else probs[i]] for i in range(n)])
    c["bad_empty_cell"] = table([id_col, target], [[ids[i], "" if i == 0 else probs[i]] for i in range(n)])
    c["bad_NA_word"] = table([id_col, target], [[ids[i], "NA" if i == 0 else probs[i]] for i in range(n)])
    c["bad_text_value"] = table([id_col, target], [[ids[i], "high" if i == 0 else probs[i]] for i in range(n)])
    c["bad_inf"] = table([id_col, target], [[ids[i], "inf" if i == 0 else probs[i]] for i in range(n)])
    c["bad_row_missing"] = table([id_col, target], [[ids[i], probs[i]] for i in range(n - 1)])
    c["bad_row_extra"] = table([id_col, target], [[ids[i], probs[i]] for i in range(n)] + [[ids[0], 0.5]])
    c["bad_duplicate_id"] = table([id_col, target], [[ids[0] if i == 1 else ids[i], probs[i]] for i in range(n)])
    c["bad_header_only"] = table([id_col, target], [])
    c["bad_empty_file"] = ""
    if extra:
        c.update(extra(probs, order))
    return c


def comp_insults():
    comments = ['"You are an idiot, and everyone knows it"', '"thanks for the link"',
                '"Nice one!!"', '"what a moron"', '"I agree with you"', '"shut up, fool"',
                '"see you at the game"', '"nobody cares, loser"', '"\\xc2\\xa0great point"',
                '"Great point"', '"same here"', '"same here"']
    labels = [1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0]
    dates = ["20120618192155Z", "", "20120620003201Z", "", "20120619094753Z", "20120620171226Z",
             "", "20120503012628Z", "20120602223825Z", "", "20120611121212Z", ""]
    answers = table(["Insult", "Date", "Comment", "Usage"],
                    [[labels[i], dates[i], comments[i], "PrivateTest"] for i in range(len(labels))])

    def extra(probs, order):
        n = len(comments)
        return {
            "ok_sample_submission_shape": table(["Insult", "Date", "Comment"], [[0, dates[i], comments[i]] for i in range(n)]),
            "bad_comment_retyped": table(["Comment", "Insult"], [[comments[i].strip('"') if i == 0 else comments[i], probs[i]] for i in range(n)]),
        }
    return answers, cases_auc("Comment", "Insult", comments, labels, extra)


def comp_pizza():
    ids = ["t3_%s" % s for s in ("i8iy4", "1mfqi0", "lclka", "zdz0b", "j7tvz", "16xwcy", "kkhm1", "vl03t", "mjwnd", "x1b3u")]
    labels = [0, 1, 0, 0, 1, 0, 1, 0, 0, 1]
    answers = table(["request_id", "requester_received_pizza"], [[ids[i], labels[i]] for i in range(len(ids))])
    return answers, cases_auc("request_id", "requester_received_pizza", ids, labels)


def comp_may2022():
    ids = list(range(800000, 800012))
    labels = [0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1]
    answers = table(["id", "f_00", "f_27", "target"], [[ids[i], 0.25 * i, "ABBAC", labels[i]] for i in range(len(ids))])

    def extra(probs, order):
        n = len(ids)
        return {
            "ok_ids_as_floats": table(["id", "target"], [["%d.0" % ids[i], probs[i]] for i in range(n)]),
            "ok_ids_leading_zeros": table(["id", "target"], [["0%d" % ids[i], probs[i]] for i in range(n)]),
            "ok_ids_quoted": '"id","target"\n' + "".join('"%d","%s"\n' % (ids[i], probs[i]) for i in range(n)),
            "ok_blank_lines_and_crlf": "id,target\r\n\r\n" + "".join("%d,%s\r\n" % (ids[i], probs[i]) for i in range(n)) + "\r\n",
            "ok_utf8_bom": "\ufeff" + table(["id", "target"], [[ids[i], probs[i]] for i in range(n)]),
            "ok_ids_padded_with_spaces": table(["id", "target"], [[" %d " % ids[i], probs[i]] for i in range(n)]),
            "bad_header_with_space": table(["id", " target"], [[ids[i], probs[i]] for i in range(n)]),
            "bad_not_utf8": table(["id", "target"], [[ids[i], probs[i]] for i in range(n)]) + "\udcff\n",
            "bad_id_NA": table(["id", "target"], [["NA" if i == 3 else ids[i], probs[i]] for i in range(n)]),
            "bad_ids_as_text": table(["id", "target"], [["id%d" % ids[i], probs[i]] for i in range(n)]),
            "bad_id_fraction": table(["id", "target"], [[ids[i] + (0.5 if i == 0 else 0), probs[i]] for i in range(n)]),
            "bad_short_row_padded_nan": "id,target\n" + "".join("%d,%s\n" % (ids[i], probs[i]) if i else "%d\n" % ids[i] for i in range(n)),
            "bad_long_row": "id,target\n" + "".join("%d,%s\n" % (ids[i], probs[i]) if i else "%d,%s,9\n" % (ids[i], probs[i]) for i in range(n)),
        }
    return answers, cases_auc("id", "target", ids, labels, extra)


def comp_dec2021():
    ids = list(range(4000000, 4000010))
    labels = [2, 1, 2, 3, 7, 2, 1, 1, 6, 2]
    answers = table(["Id", "Elevation", "Cover_Type"], [[ids[i], 3000 + i, labels[i]] for i in range(len(ids))])
    n = len(ids)
    pred = [l if i % 4 else 2 for i, l in enumerate(labels)]
    order = [3, 1, 7, 0, 9, 2, 5, 4, 8, 6]
    c = {
        "ok_in_order": table(["Id", "Cover_Type"], [[ids[i], pred[i]] for i in range(n)]),
        "ok_shuffled": table(["Id", "Cover_Type"], [[ids[i], pred[i]] for i in order]),
        "ok_perfect": table(["Id", "Cover_Type"], [[ids[i], labels[i]] for i in order]),
        "ok_float_labels": table(["Id", "Cover_Type"], [[ids[i], "%d.0" % pred[i]] for i in range(n)]),
        "ok_unseen_label": table(["Id", "Cover_Type"], [[ids[i], 9 if i == 0 else pred[i]] for i in range(n)]),
        "ok_extra_column": table(["Id", "Cover_Type", "p"], [[ids[i], pred[i], 0.5] for i in range(n)]),
        "ok_all_one_class": table(["Id", "Cover_Type"], [[ids[i], 2] for i in range(n)]),
        "bad_fraction_label": table(["Id", "Cover_Type"], [[ids[i], 2.5 if i == 0 else pred[i]] for i in range(n)]),
        "ok_text_label_matches_nothing": table(["Id", "Cover_Type"], [[ids[i], "two" if i == 0 else pred[i]] for i in range(n)]),
        "bad_text_labels_missing_first": table(["Id", "Cover_Type"], [[ids[i], "" if i == 0 else "x%d" % (i % 3)] for i in range(n)]),
        "text_labels_missing_later": table(["Id", "Cover_Type"], [[ids[i], "" if i == 5 else "x%d" % (i % 3)] for i in range(n)]),
        "text_labels_two_values": table(["Id", "Cover_Type"], [[ids[i], "x%d" % (i % 2)] for i in range(n)]),
        "bad_missing_label": table(["Id", "Cover_Type"], [[ids[i], "" if i == 0 else pred[i]] for i in range(n)]),
        "bad_rows": table(["Id", "Cover_Type"], [[ids[i], pred[i]] for i in range(n - 1)]),
        "bad_unknown_id": table(["Id", "Cover_Type"], [[ids[i] + (100 if i == 5 else 0), pred[i]] for i in range(n)]),
        "bad_lowercase_id_column": table(["id", "Cover_Type"], [[ids[i], pred[i]] for i in range(n)]),
        "bad_header_only": table(["Id", "Cover_Type"], []),
    }
    return answers, c


def comp_essay():
    ids = ["000d118", "000fe60", "001ab80", "001bdc0", "002ba53", "0030e86", "0033bf4", "0036253", "0040e27", "0061d80"]
    labels = [3, 3, 4, 4, 3, 2, 3, 2, 1, 5]
    answers = table(["essay_id", "score"], [[ids[i], labels[i]] for i in range(len(ids))])
    n = len(ids)
    pred = [min(6, l + (i % 3 == 0)) for i, l in enumerate(labels)]
    order = [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]
    c = {
        "ok_in_order": table(["essay_id", "score"], [[ids[i], pred[i]] for i in range(n)]),
        "ok_shuffled": table(["essay_id", "score"], [[ids[i], pred[i]] for i in order]),
        "ok_perfect": table(["essay_id", "score"], [[ids[i], labels[i]] for i in range(n)]),
        "ok_float_labels": table(["essay_id", "score"], [[ids[i], "%d.0" % pred[i]] for i in range(n)]),
        "ok_label_outside_range": table(["essay_id", "score"], [[ids[i], 9 if i == 0 else pred[i]] for i in range(n)]),
        "ok_constant_prediction": table(["essay_id", "score"], [[ids[i], 3] for i in range(n)]),
        "ok_extra_column": table(["essay_id", "score", "full_text"], [[ids[i], pred[i], "essay, text"] for i in range(n)]),
        "bad_fraction_label": table(["essay_id", "score"], [[ids[i], 3.5 if i == 0 else pred[i]] for i in range(n)]),
        "bad_missing_label": table(["essay_id", "score"], [[ids[i], "" if i == 0 else pred[i]] for i in range(n)]),
        "bad_text_label": table(["essay_id", "score"], [[ids[i], "three" if i == 0 else pred[i]] for i in range(n)]),
        "bad_rows_missing": table(["essay_id", "score"], [[ids[i], pred[i]] for i in range(n - 1)]),
        "bad_row_extra": table(["essay_id", "score"], [[ids[i], pred[i]] for i in range(n)] + [["zzz", 3]]),
        "bad_duplicate_id": table(["essay_id", "score"], [[ids[0] if i == 1 else ids[i], pred[i]] for i in range(n)]),
        "bad_missing_id_column": table(["score"], [[p] for p in pred]),
        "bad_header_only": table(["essay_id", "score"], []),
    }
    return answers, c


def comp_tweet():
    ids = ["cb774db0d1", "549e992a42", "088c60f138", "9642c003ef", "358bd9e861", "28b57f3990", "6e0c6d75b1", "50e14c0bb8", "e050245fbd", "fc2cbefa9d"]
    texts = ["I`d have responded, if I were going", "Sooo SAD", "bullying me", "leave me alone", "Sons of ****,",
             "http://www.dothebouncy.com/smf - some shameless plugging for the best Rangers forum on earth",
             "fun", "Soooo high", "ΟΔΟΣ Straße", "NA"]
    answers = table(["textID", "text", "selected_text", "sentiment"], [[ids[i], "full: " + texts[i], texts[i], "neutral"] for i in range(len(ids))])
    n = len(ids)
    pred = ["i`d have responded", "sooo sad", "bullying", "leave me alone", "Sons of ****,", "shameless plugging",
            "so fun", "Soooo high", "οδος strasse", "nothing"]
    order = [4, 2, 0, 9, 1, 3, 8, 7, 6, 5]
    c = {
        "ok_in_order": table(["textID", "selected_text"], [[ids[i], pred[i]] for i in range(n)]),
        "ok_shuffled": table(["textID", "selected_text"], [[ids[i], pred[i]] for i in order]),
        "ok_perfect_except_na_row": table(["textID", "selected_text"], [[ids[i], texts[i] if i < 9 else "x"] for i in range(n)]),
        "ok_empty_predictions": table(["textID", "selected_text"], [[ids[i], "" if i % 2 and i != 9 else pred[i]] for i in range(n)]),
        "ok_null_word_prediction": table(["textID", "selected_text"], [[ids[i], "null" if i == 0 else pred[i]] for i in range(n)]),
        "ok_numbers_as_text": table(["textID", "selected_text"], [[ids[i], ["1.50", "007", "2"][i % 3]] for i in range(n)]),
        "ok_extra_column": table(["textID", "selected_text", "sentiment"], [[ids[i], pred[i], "neutral"] for i in range(n)]),
        "ok_case_and_spaces": table(["textID", "selected_text"], [[ids[i], "  " + pred[i].upper() + "\t"] for i in range(n)]),
        "ok_multiline_quoted": table(["textID", "selected_text"], [[ids[i], pred[i].replace(" ", "\n", 1)] for i in range(n)]),
        "bad_both_empty_on_na_row": table(["textID", "selected_text"], [[ids[i], "" if i == 9 else pred[i]] for i in range(n)]),
        "bad_rows": table(["textID", "selected_text"], [[ids[i], pred[i]] for i in range(n - 1)]),
        "bad_unknown_id": table(["textID", "selected_text"], [["00" + ids[i] if i == 0 else ids[i], pred[i]] for i in range(n)]),
        "bad_missing_column": table(["textID", "text"], [[ids[i], pred[i]] for i in range(n)]),
        "bad_unterminated_quote": "textID,selected_text\n" + "".join("%s,%s\n" % (ids[i], pred[i].replace(",", "")) for i in range(n - 1)) + '%s,"open\n' % ids[-1],
    }
    return answers, c


def comp_patent():
    ids = ["4112d61851461f60", "09e418c93a776564", "36baf228038e314b", "1f37ead645e7f0c8", "71a5b6ad068d531f",
           "474c874d0c07bd21", "442c114ed5c4e3c9", "b8ae62ea5e1d8bdb", "faaddaf8fcba8a3f", "ae0262c02566d2ce"]
    scores = [0.5, 0.75, 0.25, 0.5, 0.0, 0.25, 1.0, 0.5, 0.25, 0.0]
    answers = table(["id", "anchor", "target", "context", "score"], [[ids[i], "a", "t", "A47", scores[i]] for i in range(len(ids))])
    n = len(ids)
    pred = [round(s * 0.8 + 0.1 * ((i * 7) % 3), 4) for i, s in enumerate(scores)]
    order = [1, 0, 3, 2, 5, 4, 7, 6, 9, 8]
    c = {
        "ok_in_order": table(["id", "score"], [[ids[i], pred[i]] for i in range(n)]),
        "ok_shuffled": table(["id", "score"], [[ids[i], pred[i]] for i in order]),
        "ok_negative_correlation": table(["id", "score"], [[ids[i], -pred[i]] for i in range(n)]),
        "ok_extra_column": table(["id", "score", "anchor"], [[ids[i], pred[i], "x"] for i in range(n)]),
        "ok_outside_unit_range": table(["id", "score"], [[ids[i], pred[i] * 100 - 7] for i in range(n)]),
        "bad_constant_prediction_nan": table(["id", "score"], [[ids[i], 0.5] for i in range(n)]),
        "bad_missing_value_nan": table(["id", "score"], [[ids[i], "" if i == 0 else pred[i]] for i in range(n)]),
        "bad_text_value": table(["id", "score"], [[ids[i], "high" if i == 0 else pred[i]] for i in range(n)]),
        "bad_rows": table(["id", "score"], [[ids[i], pred[i]] for i in range(n - 1)]),
        "bad_id_mismatch": table(["id", "score"], [[ids[i].upper() if i == 0 else ids[i], pred[i]] for i in range(n)]),
        "bad_missing_score": table(["id", "prediction"], [[ids[i], pred[i]] for i in range(n)]),
    }
    return answers, c


def comp_plant():
    classes = ["healthy", "multiple_diseases", "rust", "scab"]
    ids = ["Test_%d" % i for i in (0, 1, 2, 10, 11, 12, 20, 100, 101, 3)]
    truth = [0, 2, 3, 1, 0, 2, 3, 2, 0, 1]
    answers = table(["image_id"] + classes, [[ids[i]] + [int(truth[i] == k) for k in range(4)] for i in range(len(ids))])
    n = len(ids)

    def probs(i):
        p = [0.1, 0.1, 0.1, 0.1]
        p[(truth[i] + (i % 4 == 0)) % 4] = 0.7
        return p
    order = [5, 3, 1, 0, 9, 8, 7, 2, 4, 6]
    c = {
        "ok_in_order": table(["image_id"] + classes, [[ids[i]] + probs(i) for i in range(n)]),
        "ok_shuffled": table(["image_id"] + classes, [[ids[i]] + probs(i) for i in order]),
        "ok_columns_reordered": table(classes[::-1] + ["image_id"], [probs(i)[::-1] + [ids[i]] for i in range(n)]),
        "ok_no_range_check": table(["image_id"] + classes, [[ids[i]] + [v * 10 - 2 for v in probs(i)] for i in range(n)]),
        "bad_extra_column": table(["image_id"] + classes + ["x"], [[ids[i]] + probs(i) + [1] for i in range(n)]),
        "bad_missing_class": table(["image_id"] + classes[:3], [[ids[i]] + probs(i)[:3] for i in range(n)]),
        "bad_missing_value": table(["image_id"] + classes, [[ids[i]] + (["", 0.1, 0.1, 0.1] if i == 0 else probs(i)) for i in range(n)]),
        "bad_text_value": table(["image_id"] + classes, [[ids[i]] + (["hi", 0.1, 0.1, 0.1] if i == 0 else probs(i)) for i in range(n)]),
        "bad_rows": table(["image_id"] + classes, [[ids[i]] + probs(i) for i in range(n - 1)]),
        "bad_image_id_case": table(["image_id"] + classes, [[ids[i].lower()] + probs(i) for i in range(n)]),
        "bad_duplicate_header": table(["image_id"] + classes + ["rust"], [[ids[i]] + probs(i) + [0.1] for i in range(n)]),
    }
    return answers, c


def comp_leaf(src):
    spec = importlib.util.spec_from_file_location("leaf_classes", os.path.join(src, "mlebench/competitions/leaf-classification/classes.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    classes = list(mod.CLASSES)
    k = len(classes)
    ids = [4, 7, 9, 12, 13, 16, 19, 23]
    truth = [0, 5, 98, 40, 41, 5, 17, 60]
    answers = table(["id"] + classes, [[ids[i]] + [int(truth[i] == j) for j in range(k)] for i in range(len(ids))])
    n = len(ids)

    def probs(i, conf=0.9):
        rest = (1 - conf) / (k - 1)
        p = [rest] * k
        p[truth[i] if i % 3 else (truth[i] + 1) % k] = conf
        return p
    uniform = [1 / k] * k
    order = [7, 6, 5, 4, 3, 2, 1, 0]
    c = {
        "ok_in_order": table(["id"] + classes, [[ids[i]] + probs(i) for i in range(n)]),
        "ok_shuffled": table(["id"] + classes, [[ids[i]] + probs(i) for i in order]),
        "ok_uniform": table(["id"] + classes, [[ids[i]] + uniform for i in range(n)]),
        "ok_uniform_six_decimals": table(["id"] + classes, [[ids[i]] + ["%.6f" % (1 / k)] * k for i in range(n)]),
        "ok_one_hot_wrong_on_some": table(["id"] + classes, [[ids[i]] + [int(j == (truth[i] if i % 2 else 0)) for j in range(k)] for i in range(n)]),
        "ok_columns_reordered": table(classes[::-1] + ["id"], [probs(i)[::-1] + [ids[i]] for i in range(n)]),
        "ok_ids_as_floats": table(["id"] + classes, [["%d.0" % ids[i]] + probs(i) for i in range(n)]),
        "bad_sum_too_large": table(["id"] + classes, [[ids[i]] + probs(i, 0.95 if i == 2 else 0.9)[:-1] + [0.1 if i == 2 else probs(i)[-1]] for i in range(n)]),
        "bad_negative": table(["id"] + classes, [[ids[i]] + ([-0.01, 0.01 + probs(i)[1]] + probs(i)[2:] if i == 0 else probs(i)) for i in range(n)]),
        "bad_missing_class": table(["id"] + classes[1:], [[ids[i]] + probs(i)[1:] for i in range(n)]),
        "bad_extra_column": table(["id"] + classes + ["x"], [[ids[i]] + probs(i) + [0] for i in range(n)]),
        "bad_rows": table(["id"] + classes, [[ids[i]] + probs(i) for i in range(n - 1)]),
        "bad_unknown_id": table(["id"] + classes, [[ids[i] + (1000 if i == 0 else 0)] + probs(i) for i in range(n)]),
        "bad_missing_value": table(["id"] + classes, [[ids[i]] + ([""] + probs(i)[1:] if i == 0 else probs(i)) for i in range(n)]),
    }
    return answers, c


def comp_spooky():
    classes = ["EAP", "HPL", "MWS"]
    ids = ["id02310", "id24541", "id00134", "id27757", "id04081", "id27337", "id24265", "id25917", "id04951", "id14549"]
    truth = [0, 1, 2, 0, 0, 1, 2, 2, 1, 0]
    answers = table(["id"] + classes, [[ids[i]] + [int(truth[i] == k) for k in range(3)] for i in range(len(ids))])
    n = len(ids)

    def probs(i):
        p = [0.2, 0.2, 0.2]
        p[(truth[i] + (i % 5 == 0)) % 3] = 0.6
        return p
    order = [2, 4, 6, 8, 0, 1, 3, 5, 7, 9]
    c = {
        "ok_in_order": table(["id"] + classes, [[ids[i]] + probs(i) for i in range(n)]),
        "ok_shuffled": table(["id"] + classes, [[ids[i]] + probs(i) for i in order]),
        "ok_sample_submission": table(["id"] + classes, [[ids[i], 0.403493538995863, 0.287808366106543, 0.308698094897594] for i in range(n)]),
        "ok_class_columns_reordered": table(["id", "MWS", "EAP", "HPL"], [[ids[i], probs(i)[2], probs(i)[0], probs(i)[1]] for i in range(n)]),
        "ok_zero_on_truth": table(["id"] + classes, [[ids[i]] + ([0, 0.5, 0.5] if truth[i] == 0 else probs(i)) for i in range(n)]),
        "ok_sum_within_tolerance": table(["id"] + classes, [[ids[i], 0.200005, 0.2, 0.6] for i in range(n)]),
        "bad_sum_outside_tolerance": table(["id"] + classes, [[ids[i], 0.20002, 0.2, 0.6] for i in range(n)]),
        "bad_id_not_first": table(["EAP", "id", "HPL", "MWS"], [[probs(i)[0], ids[i], probs(i)[1], probs(i)[2]] for i in range(n)]),
        "bad_extra_column": table(["id"] + classes + ["x"], [[ids[i]] + probs(i) + [0] for i in range(n)]),
        "bad_wrong_class_name": table(["id", "EAP", "HPL", "XYZ"], [[ids[i]] + probs(i) for i in range(n)]),
        "bad_rows": table(["id"] + classes, [[ids[i]] + probs(i) for i in range(n - 1)]),
        "bad_unknown_id": table(["id"] + classes, [["id99999" if i == 0 else ids[i]] + probs(i) for i in range(n)]),
        "bad_above_one": table(["id"] + classes, [[ids[i]] + ([1.5, -0.25, -0.25] if i == 0 else probs(i)) for i in range(n)]),
    }
    return answers, c


def comp_nomad():
    n = 8
    form = [0.068, 0.249, 0.1821, 0.0375, 0.2455, 0.0, 0.1124, 0.3187]
    gap = [3.4387, 2.921, 2.7438, 3.3492, 1.9908, 4.3, 0.8, 2.1]
    answers = table(["id", "spacegroup", "formation_energy_ev_natom", "bandgap_energy_ev"], [[i + 1, 206, form[i], gap[i]] for i in range(n)])
    pf = [round(v * 1.1 + 0.01, 4) for v in form]
    pg = [round(v * 0.9 + 0.1, 4) for v in gap]
    cols = ["id", "formation_energy_ev_natom", "bandgap_energy_ev"]
    c = {
        "ok_in_order": table(cols, [[i + 1, pf[i], pg[i]] for i in range(n)]),
        "ok_sample_submission": table(cols, [[i + 1, 0.1779, 1.8892] for i in range(n)]),
        "ok_rows_shuffled_paired_by_position": table(cols, [[i + 1, pf[i], pg[i]] for i in reversed(range(n))]),
        "ok_ids_ignored": table(cols, [[100 + i, pf[i], pg[i]] for i in range(n)]),
        "ok_no_id_column": table(cols[1:], [[pf[i], pg[i]] for i in range(n)]),
        "ok_columns_reordered_extra": table(["bandgap_energy_ev", "x", "formation_energy_ev_natom"], [[pg[i], "a", pf[i]] for i in range(n)]),
        "ok_negative_above_minus_one": table(cols, [[i + 1, -0.5 if i == 0 else pf[i], pg[i]] for i in range(n)]),
        "bad_minus_one": table(cols, [[i + 1, -1 if i == 0 else pf[i], pg[i]] for i in range(n)]),
        "bad_missing_value": table(cols, [[i + 1, "" if i == 0 else pf[i], pg[i]] for i in range(n)]),
        "bad_text_value": table(cols, [[i + 1, "low" if i == 0 else pf[i], pg[i]] for i in range(n)]),
        "bad_rows": table(cols, [[i + 1, pf[i], pg[i]] for i in range(n - 1)]),
        "bad_missing_column": table(cols[:2], [[i + 1, pf[i]] for i in range(n)]),
    }
    return answers, c


def comp_lmsys():
    classes = ["winner_model_a", "winner_model_b", "winner_tie"]
    ids = [30192, 53567, 65089, 96401, 198779, 292873, 313413, 305013, 1507, 4294656694]
    truth = [0, 1, 2, 0, 1, 0, 2, 1, 0, 1]
    answers = table(["id", "model_a", "model_b", "prompt", "response_a", "response_b"] + classes,
                    [[ids[i], "gpt-4", "claude-2", '["Is it, ""safe""?"]', "[\"Yes\nno\"]", '["No"]'] + [int(truth[i] == k) for k in range(3)] for i in range(len(ids))])
    n = len(ids)
    third = 0.3333333333333333

    def probs(i):
        p = [0.25, 0.25, 0.25]
        p[(truth[i] + (i % 4 == 0)) % 3] = 0.5
        return p
    cols = ["id"] + classes
    c = {
        "ok_in_order": table(cols, [[ids[i]] + probs(i) for i in range(n)]),
        "ok_shuffled": table(cols, [[ids[i]] + probs(i) for i in [9, 0, 8, 1, 7, 2, 6, 3, 5, 4]]),
        "ok_sample_submission": table(cols, [[ids[i], third, third, third] for i in range(n)]),
        "ok_sum_rounds_to_one": table(cols, [[ids[i], 0.3333334, 0.3333334, 0.3333334] for i in range(n)]),
        "ok_extra_columns": table(cols + ["prompt"], [[ids[i]] + probs(i) + ["p"] for i in range(n)]),
        "ok_one_hot_with_zero_on_truth": table(cols, [[ids[i]] + [int(k == 0) for k in range(3)] for i in range(n)]),
        "bad_sum_six_decimals_short": table(cols, [[ids[i], 0.333333, 0.333333, 0.333333] for i in range(n)]),
        "bad_sum_above": table(cols, [[ids[i], 0.334, 0.333, 0.334] for i in range(n)]),
        "bad_missing_value": table(cols, [[ids[i]] + (["", 0.5, 0.5] if i == 0 else probs(i)) for i in range(n)]),
        "bad_missing_class": table(cols[:3], [[ids[i]] + probs(i)[:2] for i in range(n)]),
        "bad_rows": table(cols, [[ids[i]] + probs(i) for i in range(n - 1)]),
        "bad_unknown_id": table(cols, [[ids[i] + (1 if i == 0 else 0)] + probs(i) for i in range(n)]),
        "bad_negative": table(cols, [[ids[i]] + ([-0.1, 0.6, 0.5] if i == 0 else probs(i)) for i in range(n)]),
    }
    return answers, c


# ---- more of the lite split (experiments/splits/low.txt) ----

def comp_auc_simple(id_col, target, make_id):
    def make():
        ids = [make_id(i) for i in range(10)]
        labels = [0, 1, 0, 0, 1, 1, 0, 1, 0, 0]
        answers = table([id_col, target], [[ids[i], labels[i]] for i in range(len(ids))])
        cases = cases_auc(id_col, target, ids, labels)
        for k in ("ok_target_first", "ok_spaces_around_numbers", "bad_missing_id", "bad_negative", "bad_NA_word", "bad_empty_file"):
            cases.pop(k)
        return answers, cases
    return make


def comp_aptos():
    ids = ["0005cfc8afb6", "003f0afdcd15", "006efc72b638", "00836aaacf06", "009245722fa4", "009c019a7309", "010d915e229a", "0111b949947e"]
    labels = [2, 4, 0, 1, 3, 0, 2, 2]
    answers = table(["id_code", "diagnosis"], [[ids[i], labels[i]] for i in range(len(ids))])
    n = len(ids)
    pred = [min(4, l + (i % 3 == 0)) for i, l in enumerate(labels)]
    c = {
        "ok_in_order": table(["id_code", "diagnosis"], [[ids[i], pred[i]] for i in range(n)]),
        "ok_shuffled": table(["id_code", "diagnosis"], [[ids[i], pred[i]] for i in [7, 5, 3, 1, 0, 2, 4, 6]]),
        "ok_float_labels": table(["id_code", "diagnosis"], [[ids[i], "%d.0" % pred[i]] for i in range(n)]),
        "bad_fraction_label": table(["id_code", "diagnosis"], [[ids[i], 2.5 if i == 0 else pred[i]] for i in range(n)]),
        "bad_duplicate_row": table(["id_code", "diagnosis"], [[ids[i], pred[i]] for i in range(n)] + [[ids[0], 1]]),
        "bad_unknown_id": table(["id_code", "diagnosis"], [[ids[i] + ("x" if i == 0 else ""), pred[i]] for i in range(n)]),
        "bad_missing_label_column": table(["id_code", "label"], [[ids[i], pred[i]] for i in range(n)]),
        "bad_missing_id_column": table(["diagnosis"], [[pred[i]] for i in range(n)]),
        "bad_header_only": table(["id_code", "diagnosis"], []),
    }
    return answers, c


def comp_taxi():
    keys = ["2015-01-27 13:08:24.0000002", "2015-01-27 13:08:24.0000003", "2011-10-08 11:53:44.0000002",
            "2012-12-01 21:12:12.0000002", "2012-12-01 21:12:12.0000003", "2009-06-30 17:59:00.000000158"]
    fares = [10.5, 12.0, 4.9, 8.5, 22.54, 7.0]
    answers = table(["key", "fare_amount", "passenger_count"], [[keys[i], fares[i], 1] for i in range(len(keys))])
    n = len(keys)
    pred = [round(f * 0.9 + 1, 3) for f in fares]
    c = {
        "ok_in_order": table(["key", "fare_amount"], [[keys[i], pred[i]] for i in range(n)]),
        "ok_shuffled": table(["key", "fare_amount"], [[keys[i], pred[i]] for i in [5, 3, 1, 0, 2, 4]]),
        "ok_keys_not_compared": table(["key", "fare_amount"], [["k%d" % i, pred[i]] for i in range(n)]),
        "ok_integer_fares": table(["key", "fare_amount"], [[keys[i], int(pred[i])] for i in range(n)]),
        "bad_rows": table(["key", "fare_amount"], [[keys[i], pred[i]] for i in range(n - 1)]),
        "bad_missing_value": table(["key", "fare_amount"], [[keys[i], "" if i == 0 else pred[i]] for i in range(n)]),
        "bad_text_value": table(["key", "fare_amount"], [[keys[i], "ten" if i == 0 else pred[i]] for i in range(n)]),
        "bad_missing_key": table(["id", "fare_amount"], [[keys[i], pred[i]] for i in range(n)]),
    }
    return answers, c


def comp_denoising():
    ids = ["%d_%d_%d" % (img, r, col) for img in (1, 10) for r in (1, 2) for col in (1, 2, 11)]
    vals = [1.0, 0.9803921568627451, 0.5, 1.0, 0.0, 0.2, 1.0, 1.0, 0.35, 0.8, 0.9, 0.1]
    answers = table(["id", "value"], [[ids[i], vals[i]] for i in range(len(ids))])
    n = len(ids)
    pred = [round(min(1, v + 0.05 * (i % 3)), 4) for i, v in enumerate(vals)]
    c = {
        "ok_in_order": table(["id", "value"], [[ids[i], pred[i]] for i in range(n)]),
        "ok_shuffled": table(["id", "value"], [[ids[i], pred[i]] for i in reversed(range(n))]),
        "ok_sample_all_ones": table(["id", "value"], [[ids[i], 1] for i in range(n)]),
        "ok_extra_column": table(["value", "id", "x"], [[pred[i], ids[i], 0] for i in range(n)]),
        "bad_text_value": table(["id", "value"], [[ids[i], "white" if i == 0 else pred[i]] for i in range(n)]),
        "bad_missing_value": table(["id", "value"], [[ids[i], "" if i == 0 else pred[i]] for i in range(n)]),
        "bad_rows": table(["id", "value"], [[ids[i], pred[i]] for i in range(n - 1)]),
        "bad_unknown_id": table(["id", "value"], [[ids[i] + ("0" if i == 0 else ""), pred[i]] for i in range(n)]),
    }
    return answers, c


def comp_dog_breed(src):
    spec = importlib.util.spec_from_file_location("dogs", os.path.join(src, "mlebench/competitions/dog-breed-identification/dogs.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    classes = list(mod.DOGS_LIST)
    k = len(classes)
    ids = ["000621fb3cbb32d8935728e48679680e", "00102ee9d8eb90812350685311fe5890", "0012a730dfa437f5f3613fb75efcd4ce", "001510bc8570bbeee98c8d80c8a95ec1", "001a5f3114548acdefa3d4da05474c2e"]
    truth = [0, 17, 119, 60, 17]
    answers = table(["id"] + classes, [[ids[i]] + [int(truth[i] == j) for j in range(k)] for i in range(len(ids))])
    n = len(ids)

    def probs(i):
        p = [0.2 / (k - 1)] * k
        p[truth[i] if i % 2 else 3] = 0.8
        return p
    c = {
        "ok_in_order": table(["id"] + classes, [[ids[i]] + probs(i) for i in range(n)]),
        "ok_shuffled_extra_column": table(["id"] + classes + ["x"], [[ids[i]] + probs(i) + [1] for i in [4, 2, 0, 3, 1]]),
        "ok_uniform": table(["id"] + classes, [[ids[i]] + [1 / k] * k for i in range(n)]),
        "bad_missing_class": table(["id"] + classes[1:], [[ids[i]] + probs(i)[1:] for i in range(n)]),
        "bad_sum": table(["id"] + classes, [[ids[i]] + [0.9] + probs(i)[1:] for i in range(n)]),
        "bad_rows": table(["id"] + classes, [[ids[i]] + probs(i) for i in range(n - 1)]),
        "bad_unknown_id": table(["id"] + classes, [[ids[i][::-1] if i == 0 else ids[i]] + probs(i) for i in range(n)]),
    }
    return answers, c


def comp_ranzcr(src):
    spec = importlib.util.spec_from_file_location("ranzcr_classes", os.path.join(src, "mlebench/competitions/ranzcr-clip-catheter-line-classification/classes.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    scored = list(mod.CLASSES)
    all_cols = scored + ["CVC - Normal", "Swan Ganz Catheter Present"]
    ids = ["1.2.826.0.1.3680043.8.498.%d" % (10000 + 37 * i) for i in range(8)]
    rng = np.random.default_rng(3)
    truth = [[int(v) for v in row] for row in (rng.random((8, len(all_cols))) < 0.4)]
    for j in range(len(all_cols)):  # both classes in every column
        truth[0][j], truth[1][j] = 0, 1
    answers = table(["StudyInstanceUID"] + all_cols + ["PatientID"], [[ids[i]] + truth[i] + ["p%d" % i] for i in range(8)])
    pred = [[round(0.1 + 0.3 * t + 0.6 * rng.random(), 3) for t in row] for row in truth]
    c = {
        "ok_in_order": table(["StudyInstanceUID"] + all_cols, [[ids[i]] + pred[i] for i in range(8)]),
        "ok_scored_only_shuffled": table(["StudyInstanceUID"] + scored, [[ids[i]] + pred[i][:len(scored)] for i in [3, 1, 7, 5, 0, 2, 4, 6]]),
        "bad_missing_scored_class": table(["StudyInstanceUID"] + scored[1:], [[ids[i]] + pred[i][1:len(scored)] for i in range(8)]),
        "bad_above_one": table(["StudyInstanceUID"] + scored, [[ids[i]] + [1.5 if i == 0 and j == 4 else v for j, v in enumerate(pred[i][:len(scored)])] for i in range(8)]),
        "ok_unscored_class_out_of_range": table(["StudyInstanceUID"] + all_cols, [[ids[i]] + pred[i][:len(scored)] + [7, -3] for i in range(8)]),
        "bad_rows": table(["StudyInstanceUID"] + scored, [[ids[i]] + pred[i][:len(scored)] for i in range(7)]),
        "bad_unknown_id": table(["StudyInstanceUID"] + scored, [[ids[i] + ("9" if i == 0 else "")] + pred[i][:len(scored)] for i in range(8)]),
    }
    return answers, c


def comp_jigsaw(src):
    spec = importlib.util.spec_from_file_location("jigsaw_classes", os.path.join(src, "mlebench/competitions/jigsaw-toxic-comment-classification-challenge/classes.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    classes = list(mod.CLASSES)
    ids = ["%016x" % (0x1cee341fdb12 + 977 * i) for i in range(10)]
    rng = np.random.default_rng(5)
    truth = [[int(v) for v in row] for row in (rng.random((10, 6)) < 0.4)]
    for j in range(6):
        truth[0][j], truth[1][j] = 0, 1
    for i in (3, 7):  # rows the answers leave unscored
        truth[i] = [-1] * 6
    answers = table(["id"] + classes, [[ids[i]] + truth[i] for i in range(10)])
    pred = [[round(0.1 + 0.3 * max(t, 0) + 0.6 * rng.random(), 3) for t in row] for row in truth]
    cols = ["id"] + classes
    c = {
        "ok_in_order": table(cols, [[ids[i]] + pred[i] for i in range(10)]),
        "ok_shuffled": table(cols, [[ids[i]] + pred[i] for i in [9, 7, 5, 3, 1, 0, 2, 4, 6, 8]]),
        "columns_reordered_pair_by_position": table(["id"] + classes[::-1], [[ids[i]] + pred[i][::-1] for i in range(10)]),
        "id_last": table(classes + ["id"], [pred[i] + [ids[i]] for i in range(10)]),
        "nan_in_unscored_row": table(cols, [[ids[i]] + (["", "", "", "", "", ""] if i == 3 else pred[i]) for i in range(10)]),
        "nan_in_scored_row": table(cols, [[ids[i]] + ([""] + pred[i][1:] if i == 2 else pred[i]) for i in range(10)]),
        "repeated_id_replacing_another": table(cols, [[ids[0] if i == 1 else ids[i]] + pred[i] for i in range(10)]),
        "repeated_id_replacing_unscored": table(cols, [[ids[0] if i == 3 else ids[i]] + pred[i] for i in range(10)]),
        "extra_column": table(cols + ["x"], [[ids[i]] + pred[i] + [0.5] for i in range(10)]),
        "missing_class": table(cols[:-1], [[ids[i]] + pred[i][:-1] for i in range(10)]),
        "unknown_id": table(cols, [[ids[i] + ("0" if i == 0 else "")] + pred[i] for i in range(10)]),
        "rows_missing": table(cols, [[ids[i]] + pred[i] for i in range(9)]),
        "text_value": table(cols, [[ids[i]] + (["high"] + pred[i][1:] if i == 2 else pred[i]) for i in range(10)]),
    }
    return answers, c


def comp_text_norm(words_before, words_after):
    def make():
        ids = ["%d_%d" % (s, t) for s in (0, 1, 12) for t in range(4)][:len(words_after)]
        n = len(ids)
        q = lambda rows: table(["id", "after"], rows).replace("\n", "\n")  # noqa: E731
        answers = '"id","after"\n' + "".join('"%s","%s"\n' % (ids[i], words_after[i].replace('"', '""')) for i in range(n))
        pred = [words_before[i] if i % 3 else words_after[i] for i in range(n)]
        c = {
            "ok_in_order": q([[ids[i], pred[i]] for i in range(n)]),
            "ok_shuffled_quoted": '"id","after"\n' + "".join('"%s","%s"\n' % (ids[i], pred[i].replace('"', '""')) for i in reversed(range(n))),
            "ok_sample_before_as_after": q([[ids[i], words_before[i]] for i in range(n)]),
            "ok_perfect": q([[ids[i], words_after[i]] for i in range(n)]),
            "ok_missing_cells_read_as_nan": q([[ids[i], "" if i % 2 else words_after[i]] for i in range(n)]),
            "ok_numbers_column": q([[ids[i], ["1", "2.50", "007"][i % 3]] for i in range(n)]),
            "ok_numbers_column_float_repr": q([[ids[i], "2.50" if i == 8 else "1"] for i in range(n)]),
            "bad_rows": q([[ids[i], pred[i]] for i in range(n - 1)]),
            "bad_unknown_id": q([[ids[i] + ("0" if i == 0 else ""), pred[i]] for i in range(n)]),
            "bad_missing_after": table(["id", "before"], [[ids[i], pred[i]] for i in range(n)]),
        }
        return answers, c
    return make


def comp_dogs_cats():
    ids = list(range(1, 11))
    labels = [1, 0, 0, 1, 1, 0, 1, 0, 0, 1]
    answers = table(["id", "label"], [[ids[i], labels[i]] for i in range(10)])
    pred = [round(0.2 + 0.5 * l + 0.1 * ((i * 3) % 4) / 3, 3) for i, l in enumerate(labels)]
    c = {
        "ok_in_order": table(["id", "label"], [[ids[i], pred[i]] for i in range(10)]),
        "ok_shuffled": table(["label", "id"], [[pred[i], ids[i]] for i in [9, 1, 8, 2, 7, 3, 6, 4, 5, 0]]),
        "ok_sample_half": table(["id", "label"], [[ids[i], 0.5] for i in range(10)]),
        "ok_hard_labels_clipped": table(["id", "label"], [[ids[i], 1 - labels[i] if i == 0 else labels[i]] for i in range(10)]),
        "ok_ids_as_floats": table(["id", "label"], [["%d.0" % ids[i], pred[i]] for i in range(10)]),
        "bad_above_one": table(["id", "label"], [[ids[i], 1.01 if i == 0 else pred[i]] for i in range(10)]),
        "bad_missing_value": table(["id", "label"], [[ids[i], "" if i == 0 else pred[i]] for i in range(10)]),
        "bad_repeated_id": table(["id", "label"], [[ids[i], pred[i]] for i in range(10)] + [[ids[0], 0.5]]),
        "bad_unknown_id": table(["id", "label"], [[ids[i] + (100 if i == 0 else 0), pred[i]] for i in range(10)]),
        "bad_rows": table(["id", "label"], [[ids[i], pred[i]] for i in range(9)]),
        "bad_missing_label": table(["id", "p"], [[ids[i], pred[i]] for i in range(10)]),
    }
    return answers, c


# ---- grading with MLE-bench ----

def grade_case(grade_fn, read_csv, answers_path, sub_path):
    try:
        sub = read_csv(sub_path)
        ans = read_csv(answers_path)
        score = grade_fn(sub, ans)
    except Exception as e:  # noqa: BLE001 - MLE-bench's Grader: any exception is "no score"
        return {"valid": False, "score": None, "rounded": None, "error": f"{type(e).__name__}: {e}"[:300]}
    score = float(score)
    if not math.isfinite(score):
        return {"valid": False, "score": None, "rounded": None, "error": f"nan score ({score})"}
    return {"valid": True, "score": score, "rounded": round(score, 5), "error": ""}


def main():
    src = os.path.abspath(sys.argv[1])
    sys.path.insert(0, src)
    from mlebench.utils import read_csv  # MLE-bench's reader: float_precision="round_trip"

    comps = {
        "detecting-insults-in-social-commentary": comp_insults,
        "random-acts-of-pizza": comp_pizza,
        "tabular-playground-series-may-2022": comp_may2022,
        "tabular-playground-series-dec-2021": comp_dec2021,
        "learning-agency-lab-automated-essay-scoring-2": comp_essay,
        "tweet-sentiment-extraction": comp_tweet,
        "us-patent-phrase-to-phrase-matching": comp_patent,
        "plant-pathology-2020-fgvc7": comp_plant,
        "leaf-classification": lambda: comp_leaf(src),
        "spooky-author-identification": comp_spooky,
        "nomad2018-predict-transparent-conductors": comp_nomad,
        "lmsys-chatbot-arena": comp_lmsys,
        "aerial-cactus-identification": comp_auc_simple("id", "has_cactus", lambda i: "%032x.jpg" % (i * 7919)),
        "histopathologic-cancer-detection": comp_auc_simple("id", "label", lambda i: "%040x" % (i * 104729 + 5)),
        "siim-isic-melanoma-classification": comp_auc_simple("image_name", "target", lambda i: "ISIC_%07d" % (i * 311)),
        "the-icml-2013-whale-challenge-right-whale-redux": comp_auc_simple("clip", "probability", lambda i: "20090404_%06d_%ds%dms_Test%d.aif" % (i * 1000, i, i * 3, i)),
        "mlsp-2013-birds": comp_auc_simple("Id", "Probability", lambda i: 100 * (i // 3) + i % 3),
        "aptos2019-blindness-detection": comp_aptos,
        "new-york-city-taxi-fare-prediction": comp_taxi,
        "denoising-dirty-documents": comp_denoising,
        "dog-breed-identification": lambda: comp_dog_breed(src),
        "ranzcr-clip-catheter-line-classification": lambda: comp_ranzcr(src),
        "jigsaw-toxic-comment-classification-challenge": lambda: comp_jigsaw(src),
        "dogs-vs-cats-redux-kernels-edition": comp_dogs_cats,
        "text-normalization-challenge-english-language": comp_text_norm(
            ["Brillantaisia", "is", "a", "genus", "of", "plant", "in", "family", "2.5", "1992", "NA", "\"", ","],
            ["Brillantaisia", "is", "a", "genus", "of", "plant", "in", "family", "2.5", "nineteen ninety two", "nan", "\"", ","][:12]),
        "text-normalization-challenge-russian-language": comp_text_norm(
            ["Другие", "1", "2.5", "г.", "NA", "ВЦИОМ", "null", ".", "12", "3", "4", "5"],
            ["Другие", "один", "два целых и пять десятых", "года", "NA", "в_trans ц_trans и_trans о_trans м_trans", "null", ".", "двенадцать", "три", "четыре", "пять"]),
    }
    only = sys.argv[2:]
    for cid, make in comps.items():
        if only and cid not in only:
            continue
        grade_fn = importlib.import_module(f"mlebench.competitions.{cid}.grade").grade
        answers, cases = make()
        d = os.path.join(HERE, cid)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        ap = os.path.join(d, "answers.csv")
        with open(ap, "w", newline="") as f:
            f.write(answers)
        expected = {}
        for name, text in sorted(cases.items()):
            sp = os.path.join(d, name + ".csv")
            with open(sp, "w", newline="", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            expected[name] = grade_case(grade_fn, read_csv, ap, sp)
        with open(os.path.join(d, "expected.json"), "w") as f:
            json.dump(expected, f, indent=1, sort_keys=True)
            f.write("\n")
        nv = sum(e["valid"] for e in expected.values())
        print(f"{cid}: {len(expected)} cases, {nv} valid", file=sys.stderr)


if __name__ == "__main__":
    main()
