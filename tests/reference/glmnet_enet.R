## Reference elastic-net weights (alpha = 0.05, vcpcr's "enet" default) from
## glmnet, gaussian and binomial, for the vcpcr test suite.
##
## Run (after make_reference_data.py):   Rscript tests/reference/glmnet_enet.R
## Writes tests/reference/glmnet_enet.json
##
## CONVENTIONS: as in glmnet_weights.R (X scale()d with sd divisor n - 1;
## gaussian y scale()d, no intercept needed; binomial y 0/1 with an
## unpenalized intercept b0), with glmnet's elastic-net penalty
##     delta * (alpha ||w||_1 + (1 - alpha)/2 ||w||_2^2),  alpha = 0.05:
##   gaussian: w = argmin 1/(2n) ||y - Xw||^2 + penalty
##   binomial: (b0, w) = argmin -(1/n) loglik(b0 + Xw) + penalty
## glmnet's gaussian y-scaling (see glmnet_weights.R): glmnet fits y / ys with
## penalty lambda / ys, ys = sqrt(mean((y - mean(y))^2)), and scales back.  In
## vcpcr's terms its l1 penalty is lambda * alpha (exact) but its l2 penalty is
## lambda * (1 - alpha) / ys.  To get vcpcr's elastic net at (delta, ALPHA)
## the gaussian fits pass
##     lambda = delta * (ALPHA + (1 - ALPHA) * ys),  alpha = ALPHA * delta / lambda
## (both recorded as lambda_glmnet, alpha_glmnet); binomial: lambda = delta,
## alpha = ALPHA.  The KKT check below is on vcpcr's objective, so it fails
## if this mapping is wrong (with lambda = delta it is violated by 3e-3 x delta
## on gauss_wide).
##
## deltas = c(0.5, 0.1, 0.02) * lambda_max, lambda_max = the lasso's
## max_j |x_j'(y - mean(y))| / n divided by alpha (checked against glmnet's
## own first lambda).
##
## glmnet is called with standardize = FALSE, intercept = TRUE, thresh = 1e-30
## (near-ridge penalties converge slowly; see glmnet_weights.R) and a large
## maxit, so the recorded numbers are the exact solution, not glmnet's default
## early stop.  Checks (stop() on failure): single-lambda fits agree with a
## warm-start decreasing path; KKT conditions of the objective above.
##
## Each data set also records `default`: the fit at vcpcr's default absolute
## delta = 0.5 (what VCPCR() uses), so the default weights have a reference.

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

glmnet.control(fdev = 0, devmax = 1)   # never cut the warm-start path short

THRESH     <- 1e-30
MAXIT      <- 1e8
ALPHA      <- 0.05
ENET_FRACS <- c(0.5, 0.1, 0.02)
DEFAULT_DELTA <- 0.5  # vcpcr's DEFAULT_DELTA["enet"]: VCPCR()'s weights
TOL_PATH   <- 1e-6   # max relative diff single lambda vs warm-start path
TOL_KKT    <- 1e-6   # KKT violation relative to delta
TOL_LMAX   <- 1e-10  # our lambda_max vs glmnet's first lambda (relative)

rel_diff <- function(a, b) max(abs(a - b)) / max(max(abs(b)), 1e-300)

read_xy <- function(name) {
  d <- read.csv(file.path(data_dir, paste0(name, ".csv")))
  X <- as.matrix(d[, grep("^x[0-9]+$", names(d))])
  list(X = X, y = d$y)
}

fit_enet <- function(X, y, family, lambdas, alpha) {
  glmnet(X, y, family = family, alpha = alpha, lambda = lambdas,
         standardize = FALSE, intercept = TRUE, thresh = THRESH, maxit = MAXIT)
}

## KKT of the elastic net: g_j + l2 w_j + l1 sign(w_j) = 0 (w_j != 0),
## |g_j| <= l1 (w_j = 0), d/db0 = 0; max violation divided by delta.
kkt_enet <- function(X, y, family, b0, w, delta) {
  n <- nrow(X)
  eta <- b0 + drop(X %*% w)
  mu <- if (family == "gaussian") eta else plogis(eta)
  g <- -drop(crossprod(X, y - mu)) / n + delta * (1 - ALPHA) * w
  l1 <- delta * ALPHA
  act <- w != 0
  v_act <- if (any(act)) max(abs(g[act] + l1 * sign(w[act]))) else 0
  v_ina <- if (any(!act)) max(0, max(abs(g[!act])) - l1) else 0
  max(v_act, v_ina, abs(sum(y - mu)) / n) / delta
}

objective <- function(X, y, family, b0, w, delta) {
  n <- nrow(X)
  eta <- b0 + drop(X %*% w)
  loss <- if (family == "gaussian") sum((y - eta)^2) / (2 * n) else
    -sum(y * eta - log1p(exp(eta))) / n
  loss + delta * (ALPHA * sum(abs(w)) + (1 - ALPHA) / 2 * sum(w^2))
}

run_dataset <- function(name, family) {
  d <- read_xy(name)
  X <- scale(d$X)
  attributes(X)[c("scaled:center", "scaled:scale")] <- NULL
  y <- if (family == "gaussian") as.numeric(scale(d$y)) else d$y
  n <- nrow(X); p <- ncol(X)

  lambda_max <- max(abs(crossprod(X, y - mean(y)))) / n / ALPHA
  first <- glmnet(X, y, family = family, alpha = ALPHA, standardize = FALSE,
                  intercept = TRUE, nlambda = 3)$lambda[1]
  if (rel_diff(first, lambda_max) > TOL_LMAX)
    stop(sprintf("%s: lambda_max %.17g != glmnet's %.17g", name, lambda_max, first))
  deltas <- ENET_FRACS * lambda_max
  ys <- if (family == "gaussian") sqrt(mean((y - mean(y))^2)) else 1
  lambdas <- deltas * (ALPHA + (1 - ALPHA) * ys)
  alpha_glmnet <- ALPHA * deltas[1] / lambdas[1]   # the same for every delta

  single <- sapply(lambdas, function(lam) {
    f <- fit_enet(X, y, family, lam, alpha_glmnet)
    stopifnot(f$jerr == 0)
    as.numeric(coef(f))
  })
  fp <- fit_enet(X, y, family, lambdas, alpha_glmnet)   # decreasing
  stopifnot(fp$jerr == 0, length(fp$lambda) == length(deltas))
  path <- unname(as.matrix(coef(fp)))
  pa <- sapply(seq_along(deltas), function(k) rel_diff(path[, k], single[, k]))
  if (max(pa) > TOL_PATH)
    stop(sprintf("%s enet: single-lambda vs path rel diff %.3g", name, max(pa)))
  kkt <- sapply(seq_along(deltas), function(k)
    kkt_enet(X, y, family, single[1, k], single[-1, k], deltas[k]))
  nnz <- colSums(single[-1, , drop = FALSE] != 0)
  cat(sprintf("%-11s enet  single vs path %.3g, KKT %.3g, nonzeros %s\n",
              name, max(pa), max(kkt), paste(nnz, collapse = "/")))
  if (max(kkt) > TOL_KKT) stop(sprintf("%s enet: KKT violation %.3g", name, max(kkt)))

  ## vcpcr's default: delta = DEFAULT_DELTA (absolute), one single-lambda fit
  lam_def <- DEFAULT_DELTA * (ALPHA + (1 - ALPHA) * ys)
  fd <- fit_enet(X, y, family, lam_def, ALPHA * DEFAULT_DELTA / lam_def)
  stopifnot(fd$jerr == 0)
  bd <- as.numeric(coef(fd))
  kkt_def <- kkt_enet(X, y, family, bd[1], bd[-1], DEFAULT_DELTA)
  cat(sprintf("%-11s enet  default delta %g: KKT %.3g, nonzeros %d\n",
              name, DEFAULT_DELTA, kkt_def, sum(bd[-1] != 0)))
  if (kkt_def > TOL_KKT) stop(sprintf("%s default: KKT violation %.3g", name, kkt_def))

  list(family = family, n = n, p = p, alpha = ALPHA,
       delta = deltas, lambda_glmnet = lambdas, alpha_glmnet = alpha_glmnet,
       ys = ys, lambda_max = lambda_max,
       delta_fraction = ENET_FRACS,
       intercept = single[1, ],
       coef = lapply(seq_along(deltas), function(k) single[-1, k]),
       n_nonzero = nnz, rel_diff_single_vs_path = pa, kkt_rel = kkt,
       objective = sapply(seq_along(deltas), function(k)
         objective(X, y, family, single[1, k], single[-1, k], deltas[k])),
       default = list(delta = DEFAULT_DELTA, lambda_glmnet = lam_def,
                      intercept = bd[1], coef = bd[-1], kkt_rel = kkt_def,
                      objective = objective(X, y, family, bd[1], bd[-1],
                                            DEFAULT_DELTA)))
}

res <- list(
  meta = list(
    R_version = R.version.string,
    glmnet_version = as.character(packageVersion("glmnet")),
    jsonlite_version = as.character(packageVersion("jsonlite")),
    thresh = THRESH, maxit = MAXIT, alpha = ALPHA,
    glmnet_control = list(fdev = 0, devmax = 1),
    conventions = paste(
      "X scale()d (sd with n-1). gaussian: y scale()d,",
      "1/(2n)||y-Xw||^2 + delta (alpha||w||_1 + (1-alpha)/2||w||^2).",
      "binomial: y 0/1, -(1/n)loglik(b0+Xw) + the same penalty, b0 unpenalized.",
      "gaussian: lambda = delta (alpha + (1-alpha) ys), glmnet alpha = alpha delta / lambda;",
      "binomial: lambda = delta.",
      "coef excludes the intercept; intercept listed separately.")
  )
)
for (nm in c("gauss_wide", "gauss_tall")) res[[nm]] <- run_dataset(nm, "gaussian")
for (nm in c("binom_wide", "binom_tall")) res[[nm]] <- run_dataset(nm, "binomial")

out_file <- file.path(ref_dir, "glmnet_enet.json")
write_json_exact(res, out_file)
cat("wrote", out_file, "\n")
