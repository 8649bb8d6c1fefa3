## Reference partitions from R's Ward clustering of variables, for CRL(clustering="ward").
##
## Run (after make_reference_data.py):   Rscript tests/reference/baselines_ward.R
## Writes tests/reference/baselines_ward.json
##
## CRL's "ward" step clusters the standardized columns of X (variables as
## points) with Ward's criterion under Euclidean distance.  In R this is
##     hclust(dist(t(scale(X))), method = "ward.D2")
## ("ward.D2" squares the distances, which is Ward's method; "ward.D" applied to
## unsquared distances is not).  For standardized columns,
## ||x_j - x_l||^2 = 2 (n - 1) (1 - cor(x_j, x_l)), a signed-correlation distance.
## The partitions are cut with cutree(tree, k) and recorded for several k.
## The test compares partitions up to relabelling (adjusted Rand index 1).

args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("^--file=", "", args[grep("^--file=", args)])))
source(file.path(here, "json_exact.R"))

ks <- c(2L, 3L, 5L, 8L, 12L)
out <- list(meta = list(R_version = R.version.string,
                        call = "cutree(hclust(dist(t(scale(X))), method = 'ward.D2'), k)",
                        k = ks))
for (name in c("gauss_wide", "gauss_tall")) {
  d <- read.csv(file.path(here, "data", paste0(name, ".csv")))
  X <- as.matrix(d[, grep("^x", names(d))])
  tree <- hclust(dist(t(scale(X))), method = "ward.D2")
  ## Heights must be strictly increasing for cutree to be unambiguous.
  if (any(diff(tree$height) <= 0)) stop("tied or non-monotone Ward heights in ", name)
  parts <- lapply(ks, function(k) as.integer(cutree(tree, k)))
  names(parts) <- paste0("k", ks)
  out[[name]] <- list(n = nrow(X), p = ncol(X), labels = parts,
                      height = tree$height)
}
write_json_exact(out, file.path(here, "baselines_ward.json"))
cat("wrote", file.path(here, "baselines_ward.json"), "\n")
