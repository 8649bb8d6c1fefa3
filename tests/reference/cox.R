## Reference Cox model fits for the vcpcr test suite.
##
## Run (after make_reference_data.py):   Rscript tests/reference/cox.R
## Writes tests/reference/cox.json
##
## Data: cox_wide (n = 80, p = 100) and cox_tall (n = 150, p = 6); survival
## times are rounded to 0.1, so there are many tied times (including tied
## event times).
##
## (1) Penalized Cox weights from glmnet
##     X is scale()d (mean 0, sample sd 1 with n - 1);
##     glmnet(X, Surv(time, event), family = "cox", alpha = 0 / 1,
##            lambda = delta, standardize = FALSE, thresh, maxit)
##     Objective (verified below):
##        ridge:  -(1/n) logPL_Breslow(w) + delta/2 ||w||_2^2
##        lasso:  -(1/n) logPL_Breslow(w) + delta   ||w||_1
##     where logPL_Breslow(w) = sum_{i: event} [ x_i'w - log sum_{j: t_j >= t_i} exp(x_j'w) ]
##     (Breslow's handling of ties).  No y-scaling issue here: lambda = delta.
##     Checks (stop() on failure):
##       * single-lambda fit == warm-start path fit;
##       * ridge: gradient of the objective above ~ 0, and agreement with an
##         independent Newton-Raphson minimization written here;
##       * lasso: KKT (subgradient) conditions;
##       * the Breslow gradient fits, the Efron one does NOT (tie handling);
##       * glmnet's lambda_max == max|X'(grad of logPL at 0)|/n.
##     Deltas: ridge c(0.01, 0.1, 1); lasso c(0.5, 0.2, 0.1) * lambda_max,
##     lambda_max = glmnet(X, Surv, family = "cox", standardize = FALSE)$lambda[1].
##     Elastic net (alpha = 0.05): objective -(1/n) logPL + delta (alpha ||w||_1
##     + (1 - alpha)/2 ||w||^2); deltas c(0.5, 0.1, 0.02) * its lambda_max,
##     and `default`: vcpcr's default absolute delta = 0.5 (VCPCR(family="cox"));
##     KKT checked as for the lasso.
##
## (2) survival::coxph on the first three columns x1, x2, x3, RAW
##     (unstandardized), with ties = "efron" and ties = "breslow":
##     coefficients, SEs (model-based, not robust), z, Wald p-values,
##     log partial likelihood at 0 and at the estimate, concordance.
##     The log-likelihoods are checked against the Breslow / Efron
##     partial likelihood functions written here, and the score at the
##     estimate is checked to be ~0.  coxph needs eps > toler.chol (else it
##     warns); with the default toler.chol (~1.8e-12) eps = 1e-11 stops one
##     Newton step early (coefficients off by ~1e-12), so we use eps = 1e-14
##     with toler.chol = 1e-15 (harmless for these well-conditioned 3 x 3 fits).

suppressPackageStartupMessages({
  library(glmnet)
  library(survival)
  library(jsonlite)
})

script_dir <- function() {
  arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(arg)) dirname(normalizePath(sub("^--file=", "", arg[1]))) else getwd()
}
ref_dir  <- script_dir()
data_dir <- file.path(ref_dir, "data")
source(file.path(ref_dir, "json_exact.R"))   # write_json_exact(): 17 digits

glmnet.control(fdev = 0, devmax = 1)   # never truncate the warm-start path
THRESH <- 1e-30    # glmnet's thresh (1e-14 is too loose for small ridge deltas)
MAXIT  <- 1e8

RIDGE_DELTAS <- c(0.01, 0.1, 1)
LASSO_FRACS  <- c(0.5, 0.2, 0.1)
ENET_ALPHA   <- 0.05
ENET_FRACS   <- c(0.5, 0.1, 0.02)
ENET_DEFAULT <- 0.5   # vcpcr's DEFAULT_DELTA["enet"]: VCPCR(family="cox")'s weights

TOL_PATH   <- 1e-6   # single lambda vs warm-start path (relative)
TOL_KKT    <- 1e-6   # relative gradient / KKT violation
TOL_NEWTON <- 1e-6   # glmnet ridge vs Newton (relative)

rel_diff <- function(a, b) max(abs(a - b)) / max(max(abs(b)), 1e-300)

## ---------------------------------------------------------------------------
## Partial likelihoods (right-censored data, ties by Breslow or Efron)
## ---------------------------------------------------------------------------
## Breslow: log PL, gradient and Hessian
breslow <- function(X, time, event, w) {
  eta <- drop(X %*% w)
  r <- exp(eta)
  atrisk <- outer(time, time, function(ti, tj) tj >= ti)   # [i, j]: j at risk at t_i
  ev <- which(event == 1)
  S0 <- drop(atrisk[ev, , drop = FALSE] %*% r)
  S1 <- atrisk[ev, , drop = FALSE] %*% (X * r)              # |ev| x p
  ll <- sum(eta[ev] - log(S0))
  grad <- colSums(X[ev, , drop = FALSE] - S1 / S0)
  hess <- matrix(0, ncol(X), ncol(X))
  for (k in seq_along(ev)) {
    wk <- atrisk[ev[k], ] * r / S0[k]
    m <- S1[k, ] / S0[k]
    hess <- hess - (crossprod(X * wk, X) - tcrossprod(m))
  }
  list(loglik = ll, grad = grad, hess = hess)
}

## Efron: log PL and gradient
efron <- function(X, time, event, w) {
  eta <- drop(X %*% w)
  r <- exp(eta)
  ll <- 0
  grad <- rep(0, ncol(X))
  for (t in unique(time[event == 1])) {
    D <- which(time == t & event == 1)
    R <- which(time >= t)
    d <- length(D)
    S0R <- sum(r[R]);  S1R <- colSums(X[R, , drop = FALSE] * r[R])
    S0D <- sum(r[D]);  S1D <- colSums(X[D, , drop = FALSE] * r[D])
    ll <- ll + sum(eta[D])
    grad <- grad + colSums(X[D, , drop = FALSE])
    for (k in 0:(d - 1)) {
      s0 <- S0R - k / d * S0D
      s1 <- S1R - k / d * S1D
      ll <- ll - log(s0)
      grad <- grad - s1 / s0
    }
  }
  list(loglik = ll, grad = grad)
}

## Independent ridge solution: Newton on -(1/n) logPL_Breslow + delta/2 ||w||^2
newton_cox_ridge <- function(X, time, event, delta, tol = 1e-14, maxit = 200) {
  n <- nrow(X); p <- ncol(X)
  w <- rep(0, p)
  for (it in seq_len(maxit)) {
    b <- breslow(X, time, event, w)
    g <- -b$grad / n + delta * w
    H <- -b$hess / n + delta * diag(p)
    step <- solve(H, g)
    w <- w - step
    if (max(abs(step)) < tol * max(1, max(abs(w)))) break
  }
  w
}

## ---------------------------------------------------------------------------
## (1) glmnet
## ---------------------------------------------------------------------------
glmnet_cox <- function(X, time, event, alpha, lambdas) {
  yS <- Surv(time, event)
  fit1 <- function(lam) {
    f <- glmnet(X, yS, family = "cox", alpha = alpha, lambda = lam,
                standardize = FALSE, thresh = THRESH, maxit = MAXIT)
    stopifnot(f$jerr == 0)
    as.numeric(coef(f))
  }
  single <- sapply(lambdas, fit1)
  ord <- order(lambdas, decreasing = TRUE)
  fp <- glmnet(X, yS, family = "cox", alpha = alpha, lambda = lambdas[ord],
               standardize = FALSE, thresh = THRESH, maxit = MAXIT)
  stopifnot(fp$jerr == 0, length(fp$lambda) == length(lambdas))
  path <- unname(as.matrix(coef(fp)))[, order(ord), drop = FALSE]
  pa <- sapply(seq_along(lambdas), function(k) rel_diff(path[, k], single[, k]))
  list(single = single, rel_diff_single_vs_path = pa)
}

run_glmnet <- function(name, d) {
  X <- scale(as.matrix(d[, grep("^x[0-9]+$", names(d))]))
  attributes(X)[c("scaled:center", "scaled:scale")] <- NULL
  time <- d$time; event <- d$event
  n <- nrow(X); p <- ncol(X)
  out <- list(n = n, p = p, n_events = sum(event),
              n_distinct_times = length(unique(time)),
              n_distinct_event_times = length(unique(time[event == 1])))

  ## ---- ridge
  deltas <- RIDGE_DELTAS
  gf <- glmnet_cox(X, time, event, alpha = 0, deltas)
  if (max(gf$rel_diff_single_vs_path) > TOL_PATH)
    stop(sprintf("%s ridge: single vs path %.3g", name, max(gf$rel_diff_single_vs_path)))
  W <- gf$single
  kkt_b <- kkt_e <- obj <- rd_newton <- numeric(length(deltas))
  W_newton <- vector("list", length(deltas))
  for (k in seq_along(deltas)) {
    w <- W[, k]; dl <- deltas[k]
    b <- breslow(X, time, event, w)
    e <- efron(X, time, event, w)
    kkt_b[k] <- max(abs(-b$grad / n + dl * w)) / (dl * max(abs(w)))
    kkt_e[k] <- max(abs(-e$grad / n + dl * w)) / (dl * max(abs(w)))
    obj[k] <- -b$loglik / n + dl / 2 * sum(w^2)
    W_newton[[k]] <- newton_cox_ridge(X, time, event, dl)
    rd_newton[k] <- rel_diff(w, W_newton[[k]])
  }
  cat(sprintf("%-9s ridge: single vs path %.3g | Breslow stationarity %.3g | Efron %.3g | vs Newton %.3g\n",
              name, max(gf$rel_diff_single_vs_path), max(kkt_b), max(kkt_e), max(rd_newton)))
  if (max(kkt_b) > TOL_KKT) stop(sprintf("%s ridge: Breslow gradient not ~0 (%.3g)", name, max(kkt_b)))
  if (max(rd_newton) > TOL_NEWTON) stop(sprintf("%s ridge: glmnet != Newton (%.3g)", name, max(rd_newton)))
  if (min(kkt_e) < 1e-3) stop(sprintf("%s ridge: Efron gradient unexpectedly ~0", name))
  out$ridge <- list(delta = deltas, lambda_glmnet = deltas,
                    coef = lapply(seq_along(deltas), function(k) W[, k]),
                    objective = obj,
                    coef_newton = W_newton,
                    rel_diff_glmnet_vs_newton = rd_newton,
                    rel_diff_single_vs_path = gf$rel_diff_single_vs_path,
                    stationarity_breslow_rel = kkt_b,
                    stationarity_efron_rel = kkt_e,
                    n = n, p = p)

  ## ---- lasso
  yS <- Surv(time, event)
  lambda_max <- glmnet(X, yS, family = "cox", standardize = FALSE)$lambda[1]
  lambda_max_formula <- max(abs(breslow(X, time, event, rep(0, p))$grad)) / n
  cat(sprintf("%-9s lasso: lambda_max glmnet %.17g, max|grad logPL(0)|/n %.17g\n",
              name, lambda_max, lambda_max_formula))
  if (abs(lambda_max / lambda_max_formula - 1) > 1e-10)
    stop(sprintf("%s: glmnet lambda_max != max|grad|/n", name))
  deltas <- LASSO_FRACS * lambda_max
  gf <- glmnet_cox(X, time, event, alpha = 1, deltas)
  if (max(gf$rel_diff_single_vs_path) > TOL_PATH)
    stop(sprintf("%s lasso: single vs path %.3g", name, max(gf$rel_diff_single_vs_path)))
  W <- gf$single
  kkt <- obj <- numeric(length(deltas))
  for (k in seq_along(deltas)) {
    w <- W[, k]; dl <- deltas[k]
    b <- breslow(X, time, event, w)
    g <- -b$grad / n
    act <- w != 0
    v_act <- if (any(act)) max(abs(g[act] + dl * sign(w[act]))) else 0
    v_ina <- if (any(!act)) max(0, max(abs(g[!act])) - dl) else 0
    kkt[k] <- max(v_act, v_ina) / dl
    obj[k] <- -b$loglik / n + dl * sum(abs(w))
  }
  nz <- colSums(W != 0)
  cat(sprintf("%-9s lasso: single vs path %.3g | KKT %.3g | nonzeros %s\n",
              name, max(gf$rel_diff_single_vs_path), max(kkt), paste(nz, collapse = "/")))
  if (max(kkt) > TOL_KKT) stop(sprintf("%s lasso: KKT violation %.3g", name, max(kkt)))
  out$lasso <- list(delta = deltas, lambda_glmnet = deltas,
                    lambda_max = lambda_max, delta_fraction = LASSO_FRACS,
                    coef = lapply(seq_along(deltas), function(k) W[, k]),
                    n_nonzero = nz,
                    objective = obj,
                    rel_diff_single_vs_path = gf$rel_diff_single_vs_path,
                    kkt_rel = kkt, n = n, p = p)

  ## ---- elastic net, alpha = ENET_ALPHA (vcpcr's "enet" weights)
  ##   objective -(1/n) logPL + delta (alpha ||w||_1 + (1 - alpha)/2 ||w||^2)
  lambda_max_enet <- glmnet(X, yS, family = "cox", alpha = ENET_ALPHA,
                            standardize = FALSE)$lambda[1]
  if (abs(lambda_max_enet * ENET_ALPHA / lambda_max - 1) > 1e-10)
    stop(sprintf("%s enet: lambda_max != lasso lambda_max / alpha", name))
  deltas <- ENET_FRACS * lambda_max_enet
  gf <- glmnet_cox(X, time, event, alpha = ENET_ALPHA, deltas)
  W <- gf$single
  kkt <- obj <- numeric(length(deltas))
  for (k in seq_along(deltas)) {
    w <- W[, k]; l1 <- ENET_ALPHA * deltas[k]; l2 <- (1 - ENET_ALPHA) * deltas[k]
    b <- breslow(X, time, event, w)
    g <- -b$grad / n + l2 * w
    act <- w != 0
    v_act <- if (any(act)) max(abs(g[act] + l1 * sign(w[act]))) else 0
    v_ina <- if (any(!act)) max(0, max(abs(g[!act])) - l1) else 0
    kkt[k] <- max(v_act, v_ina) / l1
    obj[k] <- -b$loglik / n + l1 * sum(abs(w)) + l2 / 2 * sum(w^2)
  }
  nz <- colSums(W != 0)
  cat(sprintf("%-9s enet : single vs path %.3g | KKT %.3g | nonzeros %s\n",
              name, max(gf$rel_diff_single_vs_path), max(kkt), paste(nz, collapse = "/")))
  if (max(kkt) > TOL_KKT) stop(sprintf("%s enet: KKT violation %.3g", name, max(kkt)))
  ## vcpcr's default absolute delta, one single-lambda fit
  wd <- glmnet_cox(X, time, event, alpha = ENET_ALPHA, ENET_DEFAULT)$single[, 1]
  l1 <- ENET_ALPHA * ENET_DEFAULT; l2 <- (1 - ENET_ALPHA) * ENET_DEFAULT
  b <- breslow(X, time, event, wd)
  g <- -b$grad / n + l2 * wd
  act <- wd != 0
  v_act <- if (any(act)) max(abs(g[act] + l1 * sign(wd[act]))) else 0
  v_ina <- if (any(!act)) max(0, max(abs(g[!act])) - l1) else 0
  kkt_def <- max(v_act, v_ina) / l1
  cat(sprintf("%-9s enet : default delta %g | KKT %.3g | nonzeros %d\n",
              name, ENET_DEFAULT, kkt_def, sum(act)))
  if (kkt_def > TOL_KKT) stop(sprintf("%s enet default: KKT violation %.3g", name, kkt_def))
  out$enet <- list(alpha = ENET_ALPHA, delta = deltas, lambda_max = lambda_max_enet,
                   delta_fraction = ENET_FRACS,
                   coef = lapply(seq_along(deltas), function(k) W[, k]),
                   n_nonzero = nz, objective = obj, kkt_rel = kkt, n = n, p = p,
                   default = list(delta = ENET_DEFAULT, coef = wd, kkt_rel = kkt_def,
                                  objective = -b$loglik / n + l1 * sum(abs(wd)) +
                                    l2 / 2 * sum(wd^2)))
  out
}

## ---------------------------------------------------------------------------
## (2) coxph on x1, x2, x3 (raw scale)
## ---------------------------------------------------------------------------
run_coxph <- function(name, d) {
  X3 <- as.matrix(d[, c("x1", "x2", "x3")])
  res <- list(covariates = c("x1", "x2", "x3"), x_scale = "raw (unstandardized)")
  for (ties in c("efron", "breslow")) {
    fit <- coxph(Surv(time, event) ~ x1 + x2 + x3, data = d, ties = ties,
                 control = coxph.control(eps = 1e-14, toler.chol = 1e-15, iter.max = 100))
    s <- summary(fit)$coefficients
    ## own partial likelihood at 0 and at the estimate
    plfun <- if (ties == "efron") efron else breslow
    ll0 <- plfun(X3, d$time, d$event, rep(0, 3))$loglik
    ll1 <- plfun(X3, d$time, d$event, unname(coef(fit)))
    rd_ll <- max(abs(c(ll0, ll1$loglik) - fit$loglik))
    cat(sprintf("%-9s coxph %-7s: coef %s | loglik diff vs own %.3g | score at est %.3g | C %.4f\n",
                name, ties, paste(signif(coef(fit), 6), collapse = ", "), rd_ll,
                max(abs(ll1$grad)), fit$concordance[["concordance"]]))
    stopifnot(rd_ll < 1e-8, max(abs(ll1$grad)) < 1e-6)
    cc <- fit$concordance
    res[[ties]] <- list(
      coef = unname(s[, "coef"]), se = unname(s[, "se(coef)"]),
      z = unname(s[, "z"]), p = unname(s[, "Pr(>|z|)"]),
      loglik_null = fit$loglik[1], loglik = fit$loglik[2],
      concordance = cc[["concordance"]], concordance_std = cc[["std"]],
      concordance_counts = list(concordant = cc[["concordant"]],
                                discordant = cc[["discordant"]],
                                tied_x = cc[["tied.x"]], tied_y = cc[["tied.y"]],
                                tied_xy = cc[["tied.xy"]]),
      iterations = fit$iter,
      score_test = unname(fit$score), wald_test = unname(fit$wald.test),
      call = sprintf("coxph(Surv(time, event) ~ x1 + x2 + x3, ties = '%s', control = coxph.control(eps = 1e-14, toler.chol = 1e-15, iter.max = 100))", ties))
  }
  res
}

res <- list(meta = list(
  R_version = R.version.string,
  glmnet_version = as.character(packageVersion("glmnet")),
  survival_version = as.character(packageVersion("survival")),
  jsonlite_version = as.character(packageVersion("jsonlite")),
  thresh = THRESH, maxit = MAXIT,
  glmnet_control = list(fdev = 0, devmax = 1),
  conventions = paste(
    "glmnet: X scale()d (sd with n-1); objective -(1/n) logPL_Breslow(Xw) +",
    "delta/2||w||^2 (ridge) or + delta||w||_1 (lasso); lambda = delta; no intercept.",
    "coxph: raw x1, x2, x3; concordance = survival's (coxph$concordance).")
))
for (nm in c("cox_wide", "cox_tall")) {
  d <- read.csv(file.path(data_dir, paste0(nm, ".csv")))
  res[[nm]] <- c(run_glmnet(nm, d), list(coxph = run_coxph(nm, d)))
}

out_file <- file.path(ref_dir, "cox.json")
write_json_exact(res, out_file)
cat("wrote", out_file, "\n")
