## Reference ridge / lasso weights from glmnet for the vcpcr test suite.
##
## Run (after make_reference_data.py):   Rscript tests/reference/glmnet_weights.R
## Writes tests/reference/glmnet_weights.json
##
## CONVENTIONS (these are vcpcr's definitions, which the numbers below follow)
## ---------------------------------------------------------------------------
## * X is standardized column-wise with R's scale(): mean 0, sample sd 1
##   (divisor n - 1).
## * gaussian: y is also scale()d.  With X and y centred no intercept is needed.
##     ridge:  w = argmin 1/(2n) ||y - Xw||^2 + delta/2 ||w||_2^2
##     lasso:  w = argmin 1/(2n) ||y - Xw||^2 + delta   ||w||_1
## * binomial: y is 0/1, b0 is an unpenalized intercept.
##     ridge:  (b0, w) = argmin -(1/n) loglik(b0 + Xw) + delta/2 ||w||_2^2
##     lasso:  (b0, w) = argmin -(1/n) loglik(b0 + Xw) + delta   ||w||_1
##
## glmnet is called with standardize = FALSE, intercept = TRUE, a very tight
## thresh and a large maxit.
##
## glmnet's y-scaling for family = "gaussian": glmnet internally divides y by
## ys = sqrt(mean((y - mean(y))^2)) (population sd) and divides lambda by ys
## too, then rescales the coefficients back.  For the lasso this is exactly
## the objective above with lambda = delta.  For the ridge it is the objective
## above with penalty lambda / ys, so to get vcpcr's ridge at `delta` we pass
## lambda = delta * ys.  This is verified below against the closed-form
## solution solve(X'X/n + delta I, X'y/n); the script stop()s if they disagree.
## (Checked both on the scale()d y, where ys = sqrt((n-1)/n), and on the raw y,
## where ys is far from 1.)  For family = "binomial" there is no such scaling:
## lambda = delta (checked against an independent Newton-Raphson solution).
##
## Other checks done here (all stop() on failure):
## * single-lambda fits agree with a full decreasing lambda path (warm starts);
## * lasso: KKT conditions (subgradient) at the glmnet solution;
## * binomial ridge: agreement with an independent Newton-Raphson solution.
## The single-lambda fit is what is recorded as the reference.

suppressPackageStartupMessages({
  library(glmnet)
  library(jsonlite)
})

## locate tests/reference/ from the script path (works with Rscript)
script_dir <- function() {
  arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(arg)) dirname(normalizePath(sub("^--file=", "", arg[1]))) else getwd()
}
ref_dir  <- script_dir()
data_dir <- file.path(ref_dir, "data")
source(file.path(ref_dir, "json_exact.R"))   # write_json_exact(): 17 digits

## glmnet's path-stopping heuristics (fdev, devmax) could truncate the warm-start
## path used for the path/single-lambda comparison; switch them off.
glmnet.control(fdev = 0, devmax = 1)

THRESH <- 1e-30   # glmnet convergence threshold (see `thresh` in ?glmnet).
                  # 1e-14 is NOT enough for the ridge: coordinate descent
                  # converges slowly for small delta (rel. error ~1e-4 at
                  # delta = 1e-3 on gauss_wide), 1e-30 gives ~1e-12.
MAXIT  <- 1e8     # max passes over the data

RIDGE_DELTAS  <- c(1e-3, 1e-2, 0.1, 1, 10)
LASSO_FRACS   <- c(0.5, 0.2, 0.1, 0.05)

TOL_CLOSED_FORM <- 1e-6   # max relative diff glmnet ridge vs closed form
TOL_PATH        <- 1e-6   # max relative diff single lambda vs warm-start path
TOL_KKT         <- 1e-6   # relative KKT violation (relative to delta)
TOL_NEWTON      <- 1e-6   # max relative diff binomial ridge vs Newton

rel_diff <- function(a, b) max(abs(a - b)) / max(max(abs(b)), 1e-300)

read_xy <- function(name) {
  d <- read.csv(file.path(data_dir, paste0(name, ".csv")))
  X <- as.matrix(d[, grep("^x[0-9]+$", names(d))])
  list(X = X, y = d$y)
}

## fit glmnet at each lambda separately and along one decreasing path;
## returns a p+1 x L matrix (intercept first) for each.
fit_single_and_path <- function(X, y, family, alpha, lambdas) {
  fit1 <- function(lam) {
    f <- glmnet(X, y, family = family, alpha = alpha, lambda = lam,
                standardize = FALSE, intercept = TRUE,
                thresh = THRESH, maxit = MAXIT)
    stopifnot(f$jerr == 0)
    as.numeric(coef(f))
  }
  single <- sapply(lambdas, fit1)
  ord <- order(lambdas, decreasing = TRUE)
  fp <- glmnet(X, y, family = family, alpha = alpha, lambda = lambdas[ord],
               standardize = FALSE, intercept = TRUE,
               thresh = THRESH, maxit = MAXIT)
  stopifnot(fp$jerr == 0, length(fp$lambda) == length(lambdas))
  path <- as.matrix(coef(fp))[, order(ord), drop = FALSE]
  list(single = single, path = unname(path))
}

## relative difference between single-lambda and path fits, per lambda
path_agreement <- function(fits) {
  sapply(seq_len(ncol(fits$single)), function(k)
    rel_diff(fits$path[, k], fits$single[, k]))
}

## gradient of the smooth loss part (w.r.t. w only) at (b0, w)
loss_grad <- function(X, y, family, b0, w) {
  n <- nrow(X)
  eta <- b0 + drop(X %*% w)
  mu <- if (family == "gaussian") eta else plogis(eta)
  list(g_w = -drop(crossprod(X, y - mu)) / n, g_b0 = -sum(y - mu) / n)
}

## lasso KKT: g_j + delta*sign(w_j) = 0 (w_j != 0), |g_j| <= delta (w_j = 0);
## also d/db0 = 0.  Returns the max violation divided by delta.
kkt_lasso <- function(X, y, family, b0, w, delta) {
  g <- loss_grad(X, y, family, b0, w)
  act <- w != 0
  v_act <- if (any(act)) max(abs(g$g_w[act] + delta * sign(w[act]))) else 0
  v_ina <- if (any(!act)) max(0, max(abs(g$g_w[!act])) - delta) else 0
  max(v_act, v_ina, abs(g$g_b0)) / delta
}

## ridge stationarity: g + delta*w = 0, d/db0 = 0 (relative to delta*max|w|)
kkt_ridge <- function(X, y, family, b0, w, delta) {
  g <- loss_grad(X, y, family, b0, w)
  max(abs(g$g_w + delta * w), abs(g$g_b0)) / (delta * max(abs(w)))
}

## independent binomial ridge solution: Newton-Raphson on
## -(1/n) loglik + delta/2 ||w||^2 with unpenalized intercept
newton_logistic_ridge <- function(X, y, delta, tol = 1e-15, maxit = 200) {
  n <- nrow(X); p <- ncol(X)
  Z <- cbind(1, X)
  P <- diag(c(0, rep(delta, p)))
  beta <- c(qlogis(mean(y)), rep(0, p))
  for (it in seq_len(maxit)) {
    mu <- plogis(drop(Z %*% beta))
    grad <- -drop(crossprod(Z, y - mu)) / n + drop(P %*% beta)
    H <- crossprod(Z * (mu * (1 - mu)), Z) / n + P
    step <- solve(H, grad)
    beta <- beta - step
    if (max(abs(step)) < tol * max(1, max(abs(beta)))) break
  }
  beta
}

objective <- function(X, y, family, b0, w, delta, method) {
  n <- nrow(X)
  eta <- b0 + drop(X %*% w)
  loss <- if (family == "gaussian") sum((y - eta)^2) / (2 * n) else
    -sum(y * eta - log1p(exp(eta))) / n
  pen <- if (method == "ridge") delta / 2 * sum(w^2) else delta * sum(abs(w))
  loss + pen
}

run_dataset <- function(name, family) {
  d <- read_xy(name)
  X <- scale(d$X)
  attributes(X)[c("scaled:center", "scaled:scale")] <- NULL
  y <- if (family == "gaussian") as.numeric(scale(d$y)) else d$y
  n <- nrow(X); p <- ncol(X)
  out <- list(family = family, n = n, p = p)

  ## ------------------------------------------------------------- ridge ----
  ys <- if (family == "gaussian") sqrt(mean((y - mean(y))^2)) else 1
  deltas <- RIDGE_DELTAS
  lambdas <- deltas * ys
  fits <- fit_single_and_path(X, y, family, alpha = 0, lambdas)
  pa <- path_agreement(fits)
  if (max(pa) > TOL_PATH)
    stop(sprintf("%s ridge: single-lambda vs path rel diff %.3g", name, max(pa)))
  coefs <- fits$single
  ridge <- list(delta = deltas, lambda_glmnet = lambdas, ys = ys,
                intercept = coefs[1, ],
                coef = lapply(seq_along(deltas), function(k) coefs[-1, k]),
                n = n, p = p,
                rel_diff_single_vs_path = pa)
  ridge$kkt_rel <- sapply(seq_along(deltas), function(k)
    kkt_ridge(X, y, family, coefs[1, k], coefs[-1, k], deltas[k]))
  ridge$objective <- sapply(seq_along(deltas), function(k)
    objective(X, y, family, coefs[1, k], coefs[-1, k], deltas[k], "ridge"))

  if (family == "gaussian") {
    cf <- sapply(deltas, function(dl)
      drop(solve(crossprod(X) / n + dl * diag(p), crossprod(X, y) / n)))
    rd <- sapply(seq_along(deltas), function(k) rel_diff(coefs[-1, k], cf[, k]))
    ## what glmnet gives if lambda = delta is passed naively
    naive <- sapply(deltas, function(dl) as.numeric(coef(glmnet(
      X, y, family = family, alpha = 0, lambda = dl, standardize = FALSE,
      intercept = TRUE, thresh = THRESH, maxit = MAXIT)))[-1])
    ## ... which should be the closed-form ridge at delta / ys
    cf_naive <- sapply(deltas, function(dl)
      drop(solve(crossprod(X) / n + dl / ys * diag(p), crossprod(X, y) / n)))
    rd_naive <- sapply(seq_along(deltas), function(k)
      rel_diff(naive[, k], cf_naive[, k]))
    rd_naive_vs_delta <- sapply(seq_along(deltas), function(k)
      rel_diff(naive[, k], cf[, k]))
    cat(sprintf("%-12s ridge  glmnet(lambda=delta*ys) vs closed form: max rel diff %.3g\n",
                name, max(rd)))
    cat(sprintf("%-12s ridge  glmnet(lambda=delta) vs closed form at delta/ys: %.3g, at delta: %.3g\n",
                name, max(rd_naive), max(rd_naive_vs_delta)))
    if (max(rd) > TOL_CLOSED_FORM)
      stop(sprintf("%s: glmnet ridge (lambda = delta*ys) != closed form (%.3g)",
                   name, max(rd)))
    if (max(rd_naive) > TOL_CLOSED_FORM)
      stop(sprintf("%s: glmnet ridge (lambda = delta) != closed form at delta/ys (%.3g)",
                   name, max(rd_naive)))
    ## Because y is scale()d, ys = sqrt((n-1)/n) is close to 1 and the effect
    ## above is only ~1%.  Repeat the check on the raw (unscaled) y, where
    ## ys = population sd of y is far from 1: glmnet(lambda) must equal the
    ## closed-form ridge (with intercept mean(y)) at penalty lambda / ys_raw.
    y_raw <- d$y
    ys_raw <- sqrt(mean((y_raw - mean(y_raw))^2))
    rd_raw <- sapply(deltas, function(lam) {
      f <- glmnet(X, y_raw, family = family, alpha = 0, lambda = lam,
                  standardize = FALSE, intercept = TRUE,
                  thresh = THRESH, maxit = MAXIT)
      b <- drop(solve(crossprod(X) / n + lam / ys_raw * diag(p),
                      crossprod(X, y_raw - mean(y_raw)) / n))
      rel_diff(as.numeric(coef(f)), c(mean(y_raw), b))
    })
    cat(sprintf("%-12s ridge  raw y (ys = %.4g): glmnet(lambda) vs closed form at lambda/ys: %.3g\n",
                name, ys_raw, max(rd_raw)))
    if (max(rd_raw) > TOL_CLOSED_FORM)
      stop(sprintf("%s: raw-y check of glmnet's ridge y-scaling failed (%.3g)",
                   name, max(rd_raw)))
    ridge$coef_closed_form <- lapply(seq_along(deltas), function(k) cf[, k])
    ridge$rel_diff_glmnet_vs_closed_form <- rd
    ridge$check_lambda_equals_delta_matches_closed_form_at_delta_over_ys <- rd_naive
  } else {
    nw <- sapply(deltas, function(dl) newton_logistic_ridge(X, y, dl))
    rd <- sapply(seq_along(deltas), function(k) rel_diff(coefs[, k], nw[, k]))
    cat(sprintf("%-12s ridge  glmnet vs Newton: max rel diff %.3g\n", name, max(rd)))
    if (max(rd) > TOL_NEWTON)
      stop(sprintf("%s: glmnet binomial ridge != Newton solution (%.3g)", name, max(rd)))
    ridge$intercept_newton <- nw[1, ]
    ridge$coef_newton <- lapply(seq_along(deltas), function(k) nw[-1, k])
    ridge$rel_diff_glmnet_vs_newton <- rd
  }
  cat(sprintf("%-12s ridge  single vs path %.3g, KKT %.3g\n",
              name, max(pa), max(ridge$kkt_rel)))
  out$ridge <- ridge

  ## ------------------------------------------------------------- lasso ----
  delta_max <- if (family == "gaussian") max(abs(crossprod(X, y))) / n else
    max(abs(crossprod(X, y - mean(y)))) / n
  deltas <- LASSO_FRACS * delta_max
  fits <- fit_single_and_path(X, y, family, alpha = 1, deltas)
  pa <- path_agreement(fits)
  if (max(pa) > TOL_PATH)
    stop(sprintf("%s lasso: single-lambda vs path rel diff %.3g", name, max(pa)))
  coefs <- fits$single
  kkt <- sapply(seq_along(deltas), function(k)
    kkt_lasso(X, y, family, coefs[1, k], coefs[-1, k], deltas[k]))
  cat(sprintf("%-12s lasso  single vs path %.3g, KKT %.3g, nonzeros %s\n",
              name, max(pa), max(kkt),
              paste(colSums(coefs[-1, , drop = FALSE] != 0), collapse = "/")))
  if (max(kkt) > TOL_KKT)
    stop(sprintf("%s lasso: KKT violation %.3g", name, max(kkt)))
  out$lasso <- list(delta = deltas, lambda_glmnet = deltas,
                    delta_max = delta_max, delta_fraction = LASSO_FRACS,
                    intercept = coefs[1, ],
                    coef = lapply(seq_along(deltas), function(k) coefs[-1, k]),
                    n = n, p = p,
                    n_nonzero = colSums(coefs[-1, , drop = FALSE] != 0),
                    rel_diff_single_vs_path = pa, kkt_rel = kkt,
                    objective = sapply(seq_along(deltas), function(k)
                      objective(X, y, family, coefs[1, k], coefs[-1, k],
                                deltas[k], "lasso")))
  out
}

res <- list(
  meta = list(
    R_version = R.version.string,
    glmnet_version = as.character(packageVersion("glmnet")),
    jsonlite_version = as.character(packageVersion("jsonlite")),
    thresh = THRESH, maxit = MAXIT,
    glmnet_control = list(fdev = 0, devmax = 1),
    conventions = paste(
      "X scale()d (sd with n-1). gaussian: y scale()d;",
      "ridge 1/(2n)||y-Xw||^2 + delta/2||w||^2, lasso + delta||w||_1.",
      "binomial: y 0/1, -(1/n)loglik(b0+Xw) + same penalties, b0 unpenalized.",
      "gaussian ridge fitted with glmnet lambda = delta*ys,",
      "ys = sqrt(mean((y-mean(y))^2)); otherwise lambda = delta.",
      "coef excludes the intercept; intercept listed separately.")
  )
)
for (nm in c("gauss_wide", "gauss_tall")) res[[nm]] <- run_dataset(nm, "gaussian")
for (nm in c("binom_wide", "binom_tall")) res[[nm]] <- run_dataset(nm, "binomial")

out_file <- file.path(ref_dir, "glmnet_weights.json")
write_json_exact(res, out_file)
cat("wrote", out_file, "\n")
