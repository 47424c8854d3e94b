"""mlerl's AST instrumenter and marker verifier.

Run by the Go package instrument, outside the sandbox, on source text only:
ast.parse and compile(..., "exec") build trees and code objects but never execute
the program. It serves requests until stdin ends: one JSON request per line on
stdin, one JSON reply per line on stdout (the Go side keeps it running, so the
interpreter's start-up is paid once, not per program):

  {"mode": "mark", "code": SRC}
      -> {"ok": true, "marked": SRC2, "points": N, "note": "..."}
  {"mode": "check", "original": SRC, "marked": SRC2, "marker_lines": [L, ...]}
      -> {"ok": true, "prelude_after": L} | {"ok": false, "error": "..."}

"mark" inserts canonical marker statements, one per line,
    <indent>__mlerl_stage__("<stage>")
right after the statement that really does a stage. It never edits a line of the
program. A program that does not parse comes back unchanged with points 0: it will
fail at run time and earns nothing.

"check" proves that marked differs from original only by marker statements: both
compile, every marker line is a whole statement on its own line (not inside a
string, a bracket or a continued line), and the trees are equal once the markers
are removed. Its "prelude_after" says after which line of marked the Go side may
put the marker runtime (after a module docstring and `from __future__` imports,
which must come first).

Stage detection is heuristic by design: it looks for the calls that really do a
stage (pd.read_csv, estimator constructors, .fit, metrics, .predict ...), not for
prints that claim one.
"""

import ast
import json
import sys

MARKER = "__mlerl_stage__"

STAGES = (
    "imported packages",
    "loaded data",
    "defined model",
    "training loss",
    "trained model",
    "test loss",
    "predicted test labels",
)
ORDER = {s: i for i, s in enumerate(STAGES)}

# ---------------------------------------------------------------- vocabulary

LOAD_ATTRS = {
    "read_csv", "read_parquet", "read_json", "read_excel", "read_table",
    "read_feather", "read_pickle", "read_fwf", "read_hdf", "read_orc",
    "loadtxt", "genfromtxt", "fromfile", "imread", "load_img", "load_dataset",
    "read_image", "decode_image",
}
# Functions that load only when called on a known module (np.load, json.load, ...).
LOAD_QUALIFIED = {
    "numpy.load", "json.load", "pickle.load", "joblib.load", "csv.reader",
    "csv.DictReader", "PIL.Image.open", "Image.open", "cv2.imread",
    "imageio.imread", "imageio.v2.imread", "imageio.v3.imread",
    "matplotlib.pyplot.imread", "skimage.io.imread", "torch.load",
    "scipy.io.loadmat", "scipy.sparse.load_npz", "h5py.File",
}
LOAD_PREFIXES = ("sklearn.datasets.load_", "sklearn.datasets.fetch_",
                 "torchvision.datasets.")
READ_METHODS = {"read", "readlines", "read_text", "read_bytes"}

MODEL_SUFFIXES = (
    "Classifier", "Regressor", "Regression", "Model", "Pipeline", "SVC", "SVR",
    "Ensemble", "Ranker", "SearchCV", "NB",
)
MODEL_NAMES = {
    "Ridge", "RidgeCV", "Lasso", "LassoCV", "ElasticNet", "ElasticNetCV", "Lars",
    "LassoLars", "BayesianRidge", "ARDRegression", "Perceptron", "SGDOneClassSVM",
    "make_pipeline", "Sequential", "Booster", "CatBoost", "KNeighborsClassifier",
    "NearestNeighbors", "KMeans", "MiniBatchKMeans", "GaussianMixture",
    "IsolationForest", "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis", "NuSVC", "NuSVR", "OneClassSVM",
}
MODEL_PREFIXES = ("XGB", "LGBM", "CatBoost")
SKLEARN_MODEL_MODULES = {
    "linear_model", "ensemble", "tree", "svm", "neighbors", "naive_bayes",
    "neural_network", "discriminant_analysis", "gaussian_process", "kernel_ridge",
    "isotonic", "dummy", "multiclass", "multioutput", "calibration", "pipeline",
    "cluster", "mixture",
}
# Libraries whose classes are models when constructed (torch.nn.Linear is a layer,
# but an assignment of one is the definition of a (tiny) model all the same).
MODEL_LIBS = ("xgboost.", "lightgbm.", "catboost.", "torch.nn.", "keras.",
              "tensorflow.keras.", "tf.keras.")
NOT_MODEL_LIBS = ("xgboost.DMatrix", "xgboost.QuantileDMatrix", "lightgbm.Dataset",
                  "catboost.Pool", "torch.nn.functional.", "torch.nn.utils.",
                  "keras.layers.", "tensorflow.keras.layers.", "torch.nn.init.",
                  "keras.callbacks.", "keras.optimizers.", "keras.losses.")

FIT_METHODS = {"fit", "fit_predict", "partial_fit", "train"}
TRAIN_FUNCS = {"xgboost.train", "lightgbm.train", "catboost.train"}
CV_FUNCS = {"cross_val_score", "cross_validate", "cv"}
PREDICT_METHODS = {"predict", "predict_proba", "predict_log_proba",
                   "decision_function", "inplace_predict"}
METRIC_NAMES = {
    "accuracy_score", "roc_auc_score", "log_loss", "mean_squared_error",
    "mean_absolute_error", "mean_squared_log_error", "root_mean_squared_error",
    "f1_score", "r2_score", "cohen_kappa_score", "precision_score", "recall_score",
    "matthews_corrcoef", "balanced_accuracy_score", "average_precision_score",
    "jaccard_score", "median_absolute_error", "explained_variance_score",
    "hamming_loss", "zero_one_loss", "brier_score_loss", "pearsonr", "spearmanr",
    "confusion_matrix", "classification_report", "top_k_accuracy_score",
}
# Names of user functions that are metrics by their name alone (def rmse(...)).
METRIC_WORDS = {"rmse", "rmsle", "mae", "mse", "qwk", "kappa", "auc", "accuracy",
                "logloss", "metric", "jaccard", "pearson", "evaluate", "score"}
LOSS_WORDS = {"loss", "score", "acc", "accuracy", "auc", "rmse", "rmsle", "mae",
              "mse", "logloss", "error", "metric", "f1", "kappa", "qwk", "r2"}
LOG_FUNCS = {"print", "info", "debug", "warning", "log", "write", "set_postfix",
             "set_description"}
TRAIN_WORDS = {"train", "tr", "trn", "training", "fit"}
VALID_WORDS = {"val", "va", "vl", "valid", "validation", "dev", "holdout", "hold",
               "oof", "eval"}
TEST_WORDS = {"test", "te", "tst", "sub", "submission"}


def data_kinds(words):
    """Which data sets the words name: {"train", "valid", "test"} (X_tr, dvalid, xtest...)."""
    kinds = set()
    for w in words:
        if w in TRAIN_WORDS or w.endswith("train"):
            kinds.add("train")
        if w in VALID_WORDS or w.endswith(("valid", "val")):
            kinds.add("valid")
        if w in TEST_WORDS or w.endswith("test"):
            kinds.add("test")
    return kinds


def train_only(words):
    return data_kinds(words) == {"train"}


def not_test(words):
    k = data_kinds(words)
    return bool(k) and "test" not in k


MODELISH_TOKENS = {"model", "models", "clf", "classifier", "regressor", "reg",
                   "estimator", "est", "pipe", "pipeline", "grid", "search", "gs",
                   "xgb", "lgb", "lgbm", "gbm", "gbr", "gbc", "rf", "svm", "svc",
                   "svr", "knn", "lr", "logreg", "nb", "booster", "bst", "ensemble",
                   "stack", "stacker", "tree", "forest", "mlp", "net", "cb", "cat",
                   "m", "learner", "ridge", "lasso", "dt", "et", "ada", "hgb"}


def tokens(name):
    """Lower-case word pieces of an identifier: X_train2 -> {x, train}."""
    out, cur = set(), ""
    for ch in name:
        if ch.isalpha():
            if ch.isupper() and cur and cur[-1].islower():
                out.add(cur.lower())
                cur = ""
            cur += ch
        else:
            if cur:
                out.add(cur.lower())
            cur = ""
    if cur:
        out.add(cur.lower())
    return out


def expr_tokens(node):
    """Word pieces of every name, attribute and string constant in node."""
    out = set()
    for n in walk_no_scope(node):
        if isinstance(n, ast.Name):
            out |= tokens(n.id)
        elif isinstance(n, ast.Attribute):
            out |= tokens(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            for w in n.value.replace(":", " ").replace("=", " ").split():
                out |= tokens(w)
    return out


def walk_no_scope(node):
    """ast.walk that does not enter nested functions, lambdas or classes."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                              ast.ClassDef)):
                continue
            todo.append(c)


# ---------------------------------------------------------------- analysis


class Analysis:
    def __init__(self, tree):
        self.aliases = {}      # local name -> dotted module path
        self.model_names = set()
        self.not_model_names = set()
        self.funcs = {}        # name -> [FunctionDef]
        self.module_classes = set()  # user classes that subclass a model base
        self.returned = {}     # function name -> set of stages done in its returns
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                for a in n.names:
                    self.aliases[a.asname or a.name] = n.module + "." + a.name
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs.setdefault(n.name, []).append(n)
        for n in ast.walk(tree):
            if isinstance(n, ast.ClassDef):
                for b in n.bases:
                    q = self.qualname(b)
                    if q and (q.endswith("Module") or q.endswith("Model")):
                        self.module_classes.add(n.name)
        self.returned_stages()
        self.track_names(tree)
        self.returned_stages()

    def track_names(self, tree):
        """Names bound to models and to non-model transformers (scalers, encoders)."""
        for n in ast.walk(tree):
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Call):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                kind = None
                if self.is_model_ctor(n.value) or "defined model" in self.call_user_stages(n.value):
                    kind = self.model_names
                else:
                    q = self.qualname(n.value.func) or ""
                    if q.startswith("sklearn.") or q.split(".")[-1].endswith(
                            ("Scaler", "Encoder", "Vectorizer", "Imputer", "Transformer")):
                        kind = self.not_model_names
                if kind is not None:
                    for t in targets:
                        for name in target_names(t):
                            kind.add(name)

    def returned_stages(self):
        # Fixed point: stages a user function does in its return statements are
        # credited where it is called, since nothing can be inserted after a return.
        for _ in range(5):
            changed = False
            for name, defs in self.funcs.items():
                got = set()
                for d in defs:
                    for r in returns_of(d):
                        if r.value is not None:
                            got |= self.expr_stages(r.value)
                if got != self.returned.get(name, set()):
                    self.returned[name] = got
                    changed = True
            if not changed:
                break


    def qualname(self, node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Call):
            # LogisticRegression().fit -> resolve the constructor's name
            inner = self.qualname(node.func)
            if inner is None:
                return None
            return ".".join([inner] + parts[::-1])
        if not isinstance(node, ast.Name):
            return None
        base = self.aliases.get(node.id, node.id)
        return ".".join([base] + parts[::-1])

    def is_model_ctor(self, call):
        q = self.qualname(call.func)
        if not q:
            return False
        last = q.split(".")[-1]
        if any(q.startswith(p) for p in NOT_MODEL_LIBS):
            return False
        if q.startswith("sklearn."):
            mod = q.split(".")[1]
            if mod in SKLEARN_MODEL_MODULES:
                return True
            if mod == "model_selection" and last.endswith("SearchCV"):
                return True
            if mod == "compose" and last.startswith("TransformedTarget"):
                return True
            return False
        if any(q.startswith(p) for p in MODEL_LIBS):
            return last[:1].isupper() and not last.endswith("Loss")
        if last in self.module_classes:
            return True
        if last.endswith("Loss"):
            return False
        if last in MODEL_NAMES or last.startswith(MODEL_PREFIXES):
            return True
        return last.endswith(MODEL_SUFFIXES) and last[:1].isupper()

    def receiver_is_model(self, recv):
        if isinstance(recv, ast.Call):
            return self.is_model_ctor(recv) or bool(
                self.call_user_stages(recv) & {"defined model", "trained model"})
        name = None
        if isinstance(recv, ast.Name):
            name = recv.id
        elif isinstance(recv, ast.Attribute):
            name = recv.attr
        elif isinstance(recv, ast.Subscript):  # models["lr"].fit
            return self.receiver_is_model(recv.value)
        if name is None:
            return False
        if name in self.model_names:
            return True
        if name in self.not_model_names:
            return False
        return bool(tokens(name) & MODELISH_TOKENS)

    def call_user_stages(self, call):
        f = call.func
        name = f.id if isinstance(f, ast.Name) else (
            f.attr if isinstance(f, ast.Attribute) else None)
        if name is None or name not in self.returned:
            return set()
        got = set(self.returned[name])
        args = call_arg_tokens(call)
        if got & {"test loss", "predicted test labels"}:
            if train_only(args) and "test loss" in got:
                got.discard("test loss")
                got.add("training loss")
            if not_test(args):
                got.discard("predicted test labels")
        return got

    def is_metric_call(self, call):
        q = self.qualname(call.func) or ""
        last = q.split(".")[-1]
        if q.startswith("sklearn.metrics."):
            return last not in {"make_scorer", "get_scorer"}
        if last in METRIC_NAMES:
            return True
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in {"score", "evaluate"} and (
                call.args or call.keywords) and self.receiver_is_model(f.value):
            return True
        if isinstance(f, ast.Name) and f.id in self.funcs and (
                tokens(f.id) & METRIC_WORDS):
            return True
        return False

    def expr_stages(self, node):
        """Stages done by evaluating expression (or simple statement) node."""
        got = set()
        for n in walk_no_scope(node):
            if not isinstance(n, ast.Call):
                if isinstance(n, ast.Attribute) and n.attr in {
                        "best_score_", "cv_results_", "best_score", "best_iteration"}:
                    got.add("training loss")
                continue
            q = self.qualname(n.func) or ""
            last = q.split(".")[-1]
            f = n.func
            # loaded data
            if last in LOAD_ATTRS and isinstance(f, ast.Attribute):
                got.add("loaded data")
            elif q in LOAD_QUALIFIED or q.startswith(LOAD_PREFIXES) or (
                    q.startswith("numpy.") and last in {"load", "loadtxt", "genfromtxt"}):
                got.add("loaded data")
            elif last in LOAD_ATTRS and isinstance(f, ast.Name) and f.id in self.aliases:
                got.add("loaded data")
            elif isinstance(f, ast.Attribute) and f.attr in READ_METHODS and (
                    isinstance(f.value, ast.Call)
                    or isinstance(f.value, ast.Name) and f.value.id not in self.aliases):
                # open(p).read(), Path(p).read_text(), f.read() under `with open(p) as f`
                got.add("loaded data")
            # defined model
            if self.is_model_ctor(n):
                got.add("defined model")
            # trained model and training loss
            if isinstance(f, ast.Attribute) and f.attr in FIT_METHODS and (
                    f.attr != "train" or q in TRAIN_FUNCS or n.args):
                # (model.train() with no arguments is torch's train-mode switch)
                if q in TRAIN_FUNCS or self.receiver_is_model(f.value) or (
                        f.attr in {"fit", "partial_fit"} and len(n.args) >= 2
                        and f.value is not None
                        and not (isinstance(f.value, ast.Name)
                                 and f.value.id in self.not_model_names)):
                    got.add("trained model")
                    if q in TRAIN_FUNCS:
                        got.add("defined model")
                    kw = {k.arg for k in n.keywords}
                    if kw & {"eval_set", "evals", "validation_data"}:
                        got.add("training loss")
            if last in CV_FUNCS and (q.startswith(("sklearn.", "xgboost.", "lightgbm."))
                                     or last != "cv"):
                got.add("training loss")
            if isinstance(f, ast.Attribute) and f.attr == "evals_result":
                got.add("training loss")
            # test loss / training loss from metrics
            if self.is_metric_call(n):
                if train_only(call_arg_tokens(n)):
                    got.add("training loss")
                else:
                    got.add("test loss")
            # predicted test labels
            if isinstance(f, ast.Attribute) and f.attr in PREDICT_METHODS and (
                    n.args or n.keywords):
                if not not_test(call_arg_tokens(n)):
                    got.add("predicted test labels")
            got |= self.call_user_stages(n)
        return got


def target_names(t):
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, ast.Attribute):
        return [t.attr]
    if isinstance(t, (ast.Tuple, ast.List)):
        out = []
        for e in t.elts:
            out += target_names(e)
        return out
    return []


def call_arg_tokens(call):
    out = set()
    for a in call.args:
        out |= expr_tokens(a)
    for k in call.keywords:
        out |= expr_tokens(k.value)
    return out


def returns_of(fn):
    """Return statements of fn itself, not of functions nested in it."""
    for n in walk_no_scope(fn):
        if isinstance(n, ast.Return):
            yield n


# ---------------------------------------------------------------- placement

LOOPS = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
HOIST_TO_LOOP = {"loaded data"}


class Placer:
    """Walks every statement list, deciding where each stage's marker goes."""

    def __init__(self, tree, lines, an):
        self.lines = lines
        self.an = an
        self.parent = {}     # stmt -> enclosing compound stmt (or None)
        self.body_of = {}    # stmt -> the statement list holding it
        self.inserts = {}    # (after_line, indent) -> set of stages
        self.link(tree, None)

    def link(self, node, owner):
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            seq = getattr(node, field, None)
            if not isinstance(seq, list):
                continue
            for s in seq:
                if isinstance(s, (ast.ExceptHandler, ast.match_case)):
                    # handlers and cases are not statements: their bodies belong to node
                    for b in s.body:
                        self.parent[b] = node
                        self.body_of[b] = s.body
                        self.link(b, b)
                    continue
                self.parent[s] = owner
                self.body_of[s] = seq
                self.link(s, s)

    def indent_of(self, stmt):
        """The indentation of stmt's line if stmt starts it (block form), else None."""
        # col_offset counts UTF-8 bytes; indentation is ASCII, so slice bytes.
        raw = self.lines[stmt.lineno - 1].encode("utf-8")[:stmt.col_offset]
        if raw.strip(b" \t\f") != b"":
            return None
        return raw.decode("utf-8")

    def place(self, stmt, stage):
        target = stmt
        if stage in HOIST_TO_LOOP or getattr(stmt, "_mlerl_hoist", False):
            outer = None
            p = self.parent.get(stmt)
            while p is not None and not isinstance(p, SCOPES):
                if isinstance(p, LOOPS):
                    outer = p
                p = self.parent.get(p)
            if outer is not None:
                target = outer
        # A statement list whose first statement does not start its line is a
        # one-line body (`if x: y = f()`, `else: ...`): nothing can be inserted
        # inside it without editing a line, so the marker goes after the
        # enclosing compound statement instead.
        while target is not None and self.indent_of(self.body_of[target][0]) is None:
            target = self.parent.get(target)
        if target is None:
            return
        body = self.body_of[target]
        ind = self.indent_of(body[0])
        end = target.end_lineno
        # A statement followed by `; more` on its last line: go after all of them.
        i = body.index(target)
        while i + 1 < len(body) and body[i + 1].lineno == end:
            i += 1
            end = body[i].end_lineno
        self.inserts.setdefault((end, ind), set()).add(stage)


def simple_parts(stmt):
    """The expressions a statement evaluates itself (not its nested bodies).

    A stage found in a loop's iterable or a with's context goes after the whole
    loop or block (Placer.place puts it after end_lineno)."""
    if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return [stmt]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [i.context_expr for i in stmt.items]
    return []


def is_log_call(stmt):
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    f = stmt.value.func
    name = f.id if isinstance(f, ast.Name) else (f.attr if isinstance(f, ast.Attribute) else "")
    return name in LOG_FUNCS


def loop_trains(loop, an):
    for n in walk_no_scope(loop):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in {"backward", "step", "fit",
                                                          "partial_fit", "train",
                                                          "train_on_batch"}:
                return True
            if isinstance(f, ast.Name) and (tokens(f.id) & {"train", "fit", "epoch"}):
                return True
    return False


def mark(src):
    tree = ast.parse(src)
    compile(tree, "<policy>", "exec", dont_inherit=True)
    lines = src.split("\n")
    an = Analysis(tree)
    pl = Placer(tree, lines, an)

    # imported packages: after the last import that precedes the first statement
    # doing another stage, at module level and at the top of each function.
    def does_stage(s):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False  # defining a function does none of its work
        return any(an.expr_stages(p) for x in walk_no_scope(s)
                   if isinstance(x, ast.stmt) for p in simple_parts(x))

    def imports_in(body):
        last = None
        for s in body:
            if isinstance(s, ast.ImportFrom) and s.module == "__future__":
                continue
            if isinstance(s, (ast.Import, ast.ImportFrom)) or isinstance(s, ast.Try) and all(
                    isinstance(b, (ast.Import, ast.ImportFrom)) for b in s.body):
                last = s
            elif does_stage(s):
                break
        if last is not None:
            pl.place(last, "imported packages")

    imports_in(tree.body)
    for defs in an.funcs.values():
        for d in defs:
            imports_in(d.body)

    for stmt in list(pl.body_of):
        if isinstance(stmt, (ast.Return, ast.Raise)):
            continue
        got = set()
        for part in simple_parts(stmt):
            got |= an.expr_stages(part)
        # training loss: a log of a loss/score inside a training loop, or a log
        # naming both training and a loss.
        if is_log_call(stmt):
            words = call_arg_tokens(stmt.value)
            for k in stmt.value.keywords:
                words |= tokens(k.arg or "")
            if words & LOSS_WORDS:
                p = pl.parent.get(stmt)
                in_train_loop = False
                while p is not None and not isinstance(p, SCOPES):
                    if isinstance(p, LOOPS) and loop_trains(p, an):
                        in_train_loop = True
                        break
                    p = pl.parent.get(p)
                if in_train_loop or train_only(words):
                    got.add("training loss")
                if train_only(words):
                    got.discard("test loss")  # print("train acc", m.score(X, y))
        # torch-style training steps: the model is trained once the loop ends.
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            f = stmt.value.func
            if isinstance(f, ast.Attribute) and f.attr in {"backward", "step"} and (
                    f.attr == "backward" or tokens(ast.unparse(f.value)) & {"optimizer", "opt", "optim"}):
                stmt._mlerl_hoist = True
                got.add("trained model")
        for stage in got:
            pl.place(stmt, stage)

    inserts = []
    for (after, ind), stages in pl.inserts.items():
        for st in sorted(stages, key=ORDER.get):
            inserts.append((after, ind, st))
    inserts.sort(key=lambda t: (t[0], ORDER[t[2]]))
    marked, accepted = build(src, lines, inserts)
    note = ""
    if len(accepted) < len(inserts):
        note = "dropped %d insertion(s) that would not compile" % (len(inserts) - len(accepted))
    return marked, len(accepted), note


def build(src, lines, inserts):
    """Inserts markers, keeping only those that pass check (all at once, else one by one)."""
    def render(chosen):
        out, k = [], 0
        marker_lines = []
        for i, line in enumerate(lines, start=1):
            out.append(line)
            while k < len(chosen) and chosen[k][0] == i:
                after, ind, st = chosen[k]
                eol = "\r" if line.endswith("\r") else ""
                out.append('%s%s("%s")%s' % (ind, MARKER, st, eol))
                marker_lines.append(len(out))
                k += 1
        return "\n".join(out), marker_lines

    text, ml = render(inserts)
    if not inserts or check(src, text, ml)[0]:
        return text, inserts
    accepted = []
    for ins in inserts:
        trial = sorted(accepted + [ins], key=lambda t: (t[0], ORDER[t[2]]))
        text, ml = render(trial)
        if check(src, text, ml)[0]:
            accepted = trial
    text, _ = render(accepted)
    return text, accepted


# ---------------------------------------------------------------- check


def is_marker_stmt(s):
    return (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Name) and s.value.func.id == MARKER
            and len(s.value.args) == 1 and not s.value.keywords
            and isinstance(s.value.args[0], ast.Constant)
            and s.value.args[0].value in ORDER)


def strip_markers(tree, want_lines):
    found = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            seq = getattr(node, field, None)
            if not isinstance(seq, list):
                continue
            keep = []
            for s in seq:
                if isinstance(s, ast.stmt) and s.lineno in want_lines and is_marker_stmt(s) \
                        and s.end_lineno == s.lineno:
                    found.append(s.lineno)
                else:
                    keep.append(s)
            seq[:] = keep
    return found


def check(original, marked, marker_lines):
    try:
        orig = ast.parse(original)
        compile(orig, "<original>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return False, "original does not compile: %s" % one_line(e)
    try:
        new = ast.parse(marked)
        compile(new, "<marked>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return False, "marked code does not compile: %s" % one_line(e)
    want = set(marker_lines)
    prelude_after = 0
    for i, s in enumerate(new.body):
        if i == 0 and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) \
                and isinstance(s.value.value, str):
            prelude_after = s.end_lineno
        elif isinstance(s, ast.ImportFrom) and s.module == "__future__":
            prelude_after = s.end_lineno
        else:
            break
    found = strip_markers(new, want)
    missing = sorted(want - set(found))
    if missing:
        return False, "marker on line %d is not a statement of its own" % missing[0]
    if ast.dump(orig) != ast.dump(new):
        return False, "code changed beyond the inserted markers"
    return True, prelude_after


def one_line(e):
    return str(e).replace("\n", " ")[:200]


def handle(req):
    mode = req.get("mode")
    if mode == "mark":
        code = req["code"]
        try:
            marked, points, note = mark(code)
            return {"ok": True, "marked": marked, "points": points, "note": note}
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            return {"ok": True, "marked": code, "points": 0,
                    "note": "not instrumented: %s" % one_line(e)}
    if mode == "check":
        try:
            ok, info = check(req["original"], req["marked"], req["marker_lines"])
        except (RecursionError, MemoryError) as e:
            ok, info = False, "cannot verify: %s" % one_line(e)
        return {"ok": True, "prelude_after": info} if ok else {"ok": False, "error": info}
    return {"ok": False, "error": "unknown mode %r" % (mode,)}


def main():
    try:
        import resource
        limit = 1 << 30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass
    sys.setrecursionlimit(10000)
    out = sys.stdout
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            rep = handle(json.loads(line.decode("utf-8", "surrogateescape")))
        except (ValueError, KeyError, TypeError) as e:
            rep = {"ok": False, "error": "bad request: %s" % one_line(e)}
        # json.dumps escapes newlines: one reply is one line.
        out.write(json.dumps(rep) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
