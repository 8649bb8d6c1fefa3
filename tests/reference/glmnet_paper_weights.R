## The VC-PCR paper's "ridge" and "lasso" weights, computed exactly as the
## authors' experiment code computed them, for vcpcr's weights="glmnet_ridge"
## and "glmnet_lasso" (vcpcr/_solvers/glmnet.py).
##
## Run (after make_glmnet_paper_data.py):
##     Rscript tests/reference/glmnet_paper_weights.R
## Writes tests/reference/glmnet_paper_weights.json
##
## THE AUTHORS' CALL
## -----------------
## rebeccamarion/VC-PCR-Experiments, Functions/Methods/VC-PCR/VCPCR.R:
##
##   X <- fold.data$X.norm; y <- fold.data$y.norm     # scale()d training fold
##   lambda.lasso <- if (alpha == 1) max((1/nrow(X))*abs(t(X)%*%y)) else 1
##   weights <- glmnet(x = X, y = y, family = "gaussian", alpha = alpha,
##                     lambda = delta*lambda.lasso, standardize = F)$beta[, 1]
##
## with every other argument at glmnet's default: intercept = TRUE,
## thresh = 1e-7, maxit = 1e5, type.gaussian = "covariance" (p = 200 < 500).
## Grids (Code/InactiveVarExp/02_Run_methods.R):
##   ridge (alpha = 0): delta in 10^seq(log10(0.0001), log10(0.01), length = 10)
##   lasso (alpha = 1): delta in 10^seq(log10(0.00001), log10(0.2), length = 10)
## X.norm and y.norm are centred and divided by their sample sd (n - 1)
## (Functions/CrossVal/process_fold_data.R), as scale() does here.
##
## glmnet's coordinate descent starts from zero and stops when no coefficient
## moves by more than its threshold in one pass, so these weights are NOT the
## ridge / lasso solutions at lambda; `rel_dist_to_solution` records how far
## they are (ridge: closed form of glmnet's objective, whose ridge penalty is
## lambda / ys with ys = sqrt(mean((y - mean(y))^2)); lasso: glmnet again with
## thresh = 1e-20).  `npasses` is fit$npasses.
##
## Besides the paper's call, `variants` exercise the other code paths of the
## Python port (standardize = TRUE, intercept = FALSE, alpha = 0.5, a smaller
## thresh) on two data sets.

suppressPackageStartupMessages({
  library(glmnet)
  library(jsonlite)
})

script_dir <- function() {
  arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(arg)) dirname(normalizePath(sub("^--file=", "", arg[1]))) else getwd()
}
ref_dir  <- script_dir()
data_dir <- file.path(ref_dir, "data")
source(file.path(ref_dir, "json_exact.R"))   # write_json_exact(): 17 digits

RIDGE_DELTAS <- 10^seq(log10(0.0001), log10(0.01), length = 10)
LASSO_DELTAS <- 10^seq(log10(0.00001), log10(0.2), length = 10)
DATASETS <- c("paper_c1_n50", "paper_c2_n50", "paper_c3_n50", "paper_c2_n25",
              "gauss_wide", "gauss_tall")

read_scaled <- function(name) {
  d <- read.csv(file.path(data_dir, paste0(name, ".csv")))
  X <- scale(as.matrix(d[, grep("^x[0-9]+$", names(d))]))
  attributes(X)[c("scaled:center", "scaled:scale")] <- NULL
  list(X = X, y = as.numeric(scale(d$y)))
}

fit_record <- function(fit) {
  stopifnot(fit$jerr == 0, length(fit$lambda) == 1)
  list(coef = as.numeric(fit$beta[, 1]), intercept = as.numeric(fit$a0),
       npasses = fit$npasses, dev_ratio = as.numeric(fit$dev.ratio))
}

rel_dist <- function(a, b) sqrt(sum((a - b)^2)) / sqrt(sum(b^2))

ridge_solution <- function(X, y, lambda) {
  n <- nrow(X)
  ys <- sqrt(mean((y - mean(y))^2))
  Xc <- scale(X, scale = FALSE); yc <- y - mean(y)
  drop(solve(crossprod(Xc) / n + diag(lambda / ys, ncol(X)), crossprod(Xc, yc) / n))
}

paper_fits <- function(X, y, alpha, deltas) {
  lambda_lasso <- if (alpha == 1) max((1 / nrow(X)) * abs(t(X) %*% y)) else 1
  lambdas <- deltas * lambda_lasso
  recs <- lapply(lambdas, function(lam)
    fit_record(glmnet(x = X, y = y, family = "gaussian", alpha = alpha,
                      lambda = lam, standardize = F)))
  dist <- sapply(seq_along(lambdas), function(k) {
    sol <- if (alpha == 0) ridge_solution(X, y, lambdas[k]) else
      as.numeric(glmnet(X, y, alpha = 1, lambda = lambdas[k], standardize = F,
                        thresh = 1e-20, maxit = 1e8)$beta[, 1])
    rel_dist(recs[[k]]$coef, sol)
  })
  list(alpha = alpha, delta = deltas, lambda_lasso = lambda_lasso,
       lambda_glmnet = lambdas,
       coef = lapply(recs, `[[`, "coef"),
       intercept = sapply(recs, `[[`, "intercept"),
       npasses = sapply(recs, `[[`, "npasses"),
       dev_ratio = sapply(recs, `[[`, "dev_ratio"),
       rel_dist_to_solution = dist)
}

VARIANTS <- list(
  list(alpha = 0,   lambda = 1e-3, standardize = TRUE,  intercept = TRUE,  thresh = 1e-7),
  list(alpha = 1,   lambda = 1e-2, standardize = TRUE,  intercept = TRUE,  thresh = 1e-7),
  list(alpha = 0,   lambda = 1e-3, standardize = FALSE, intercept = FALSE, thresh = 1e-7),
  list(alpha = 1,   lambda = 1e-2, standardize = TRUE,  intercept = FALSE, thresh = 1e-7),
  list(alpha = 0.5, lambda = 1e-2, standardize = FALSE, intercept = TRUE,  thresh = 1e-7),
  list(alpha = 0,   lambda = 1e-4, standardize = FALSE, intercept = TRUE,  thresh = 1e-10)
)

variant_fits <- function(d) {
  lapply(VARIANTS, function(v) {
    fit <- glmnet(d$X, d$y, family = "gaussian", alpha = v$alpha, lambda = v$lambda,
                  standardize = v$standardize, intercept = v$intercept,
                  thresh = v$thresh)
    list(args = v, fit = fit_record(fit))
  })
}

res <- list(meta = list(
  R_version = R.version.string,
  glmnet_version = as.character(packageVersion("glmnet")),
  jsonlite_version = as.character(packageVersion("jsonlite")),
  call = paste("glmnet(x = X, y = y, family = 'gaussian', alpha = alpha,",
               "lambda = delta * lambda_lasso, standardize = F) on scale()d X, y;",
               "lambda_lasso = max|X'y|/n for alpha = 1, else 1"),
  source = "rebeccamarion/VC-PCR-Experiments Functions/Methods/VC-PCR/VCPCR.R"
))
for (nm in DATASETS) {
  d <- read_scaled(nm)
  ridge <- paper_fits(d$X, d$y, 0, RIDGE_DELTAS)
  lasso <- paper_fits(d$X, d$y, 1, LASSO_DELTAS)
  entry <- list(n = nrow(d$X), p = ncol(d$X), ridge = ridge, lasso = lasso)
  if (nm %in% c("paper_c2_n50", "gauss_wide")) entry$variants <- variant_fits(d)
  res[[nm]] <- entry
  cat(sprintf("%-13s ridge passes %s (dist %.2f-%.2f) | lasso passes %s\n", nm,
              paste(ridge$npasses, collapse = "/"),
              min(ridge$rel_dist_to_solution), max(ridge$rel_dist_to_solution),
              paste(lasso$npasses, collapse = "/")))
}

out_file <- file.path(ref_dir, "glmnet_paper_weights.json")
write_json_exact(res, out_file)
cat("wrote", out_file, "\n")
