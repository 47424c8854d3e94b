# export-unseen.R writes the raw data of the "unseen" task set (held out from
# tuning the built-in policy; bench/unseen/) as CSV files. Like export.R it
# only exports: subsampling, splits, ids and formats are decided in Go
# (suite/unseen.go).
#
# usage: Rscript export-unseen.R OUTDIR
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript export-unseen.R OUTDIR")
out <- args[[1]]
dir.create(out, showWarnings = FALSE, recursive = TRUE)

options(scipen = 100)
Sys.setenv(TZ = "UTC")

put <- function(df, file) {
  df <- as.data.frame(df, stringsAsFactors = FALSE)
  for (n in names(df)) {
    if (is.factor(df[[n]])) df[[n]] <- as.character(df[[n]])
    if (inherits(df[[n]], "Date")) df[[n]] <- format(df[[n]], "%Y-%m-%d")
    if (inherits(df[[n]], "POSIXct")) df[[n]] <- format(df[[n]], "%Y-%m-%d %H:%M:%S", tz = "UTC")
  }
  write.csv(df, file.path(out, file), row.names = FALSE, na = "",
            fileEncoding = "UTF-8")
}

from <- function(pkg, name) {
  e <- new.env()
  data(list = name, package = pkg, envir = e)
  get(name, envir = e)
}

put(from("modeldata", "tate_text"), "tate_text.csv")
put(from("dslabs", "polls_us_election_2016"), "polls_us_election_2016.csv")
put(from("dslabs", "trump_tweets"), "trump_tweets.csv")
ml <- from("dslabs", "movielens")
ml$rated_at <- as.POSIXct(ml$timestamp, origin = "1970-01-01", tz = "UTC")
ml$timestamp <- NULL
put(ml, "movielens.csv")

for (p in c("modeldata", "dslabs")) {
  cat(p, as.character(packageVersion(p)), "\n", file = stderr())
}
