# export.R writes the raw data sets the suite is built from as CSV files.
# It only exports: every split, id and format decision is made by the Go
# package suite (prepare.go), so the build stays deterministic and testable.
#
# usage: Rscript export.R OUTDIR
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript export.R OUTDIR")
out <- args[[1]]
dir.create(out, showWarnings = FALSE, recursive = TRUE)

# Never write numbers in scientific notation (R would print 1e+05 for 100000).
options(scipen = 100)

put <- function(df, file) {
  df <- as.data.frame(df, stringsAsFactors = FALSE)
  for (n in names(df)) {
    if (is.factor(df[[n]])) df[[n]] <- as.character(df[[n]])
  }
  write.csv(df, file.path(out, file), row.names = FALSE, na = "",
            fileEncoding = "UTF-8")
}

from_modeldata <- function(name) {
  e <- new.env()
  data(list = name, package = "modeldata", envir = e)
  e
}
from_mlbench <- function(name) {
  e <- new.env()
  data(list = name, package = "mlbench", envir = e)
  get(name, envir = e)
}

ff <- from_modeldata("small_fine_foods")
put(ff$training_data, "fine_foods_train.csv")
put(ff$testing_data, "fine_foods_test.csv")

put(janeaustenr::austen_books(), "austen_books.csv")
put(get("ames", from_modeldata("ames")), "ames.csv")
put(get("wa_churn", from_modeldata("wa_churn")), "wa_churn.csv")
put(get("hpc_data", from_modeldata("hpc_data")), "hpc_data.csv")
put(get("meats", from_modeldata("meats")), "meats.csv")
put(get("stackoverflow", from_modeldata("stackoverflow")), "stackoverflow.csv")
put(from_mlbench("LetterRecognition"), "letter_recognition.csv")
put(from_mlbench("Soybean"), "soybean.csv")

# Versions go into the build log so a checksum difference can be traced to a
# package upgrade.
for (p in c("modeldata", "mlbench", "janeaustenr")) {
  cat(p, as.character(packageVersion(p)), "\n", file = stderr())
}
