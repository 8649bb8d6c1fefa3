## Reference Firth (bias-reduced) logistic regression fits for vcpcr tests.
##
## Run (after make_reference_data.py):   Rscript tests/reference/firth_logistic.R
## Writes tests/reference/firth_logistic.json
##
## For each of firth_regular, firth_quasi (quasi-complete separation) and
## firth_complete (complete separation), on the RAW (unstandardized) x1, x2:
##   (a) glm(y ~ x1 + x2, family = binomial, method = brglm2::brglmFit,
##           type = "AS_mean")
##       i.e. mean bias reduction, which for the logistic (canonical) link is
##       Firth's penalized likelihood  l(b) + 1/2 log det(X' W(b) X).
##       Recorded: coefficients (intercept first), Wald standard errors from
##       the Fisher information at the estimate, z values, two-sided normal
##       p-values, the ordinary log-likelihood l(b) at the estimate (what
##       logLik() reports) and the penalized log-likelihood.
##       The brglm2 fit is checked (stop() on failure) against an independent
##       Newton-Raphson solution of Firth's modified score equations
##       X'(y - mu + h (1/2 - mu)) = 0, h = diag of the hat matrix.
##   (b) plain glm(y ~ x1 + x2, family = binomial): for firth_regular the
##       (finite) ML estimates, SEs, z, p, log-likelihood.  SEs are the exact
##       inverse Fisher information at the estimate (see the note in the code
##       on summary.glm's SEs, which lag one IRLS step).
##   (c) separation information.  brglm2::detect_separation() has moved to the
##       'detectseparation' package (brglm2 >= 0.8.0; the installed brglm2 only
##       has a stub that errors) and detectseparation is not installed, so
##       instead we record, for every data set, plain glm's coefficients and
##       SEs after 5, 10, 25, 50 IRLS iterations (epsilon = 1e-300, so it never
##       stops early) and flag coefficients that keep growing: this is the
##       same idea as detectseparation::check_infinite_estimates().
##
## NOTE: type = "AS_mean" must go INSIDE brglmControl() when a control is
## given: glm() only forwards `...` (e.g. type = ) to the fitting method when
## `control` is not supplied.  Passing control = brglmControl(epsilon = ...)
## and type = "AS_mean" separately silently uses the default "AS_mixed" (which
## for binomial models gives the same estimates, but we want to be exact).

suppressPackageStartupMessages({
  library(brglm2)
  library(jsonlite)
})

script_dir <- function() {
  arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(arg)) dirname(normalizePath(sub("^--file=", "", arg[1]))) else getwd()
}
ref_dir  <- script_dir()
data_dir <- file.path(ref_dir, "data")
source(file.path(ref_dir, "json_exact.R"))   # write_json_exact(): 17 digits

TOL_FIRTH <- 1e-8   # brglm2 vs independent Firth Newton solution (rel.)

## Firth logistic regression by Newton-Raphson on the modified score.
firth_newton <- function(Z, y, tol = 1e-14, maxit = 500) {
  beta <- rep(0, ncol(Z))
  for (it in seq_len(maxit)) {
    mu <- plogis(drop(Z %*% beta))
    w <- mu * (1 - mu)
    info <- crossprod(Z * w, Z)
    info_inv <- solve(info)
    h <- rowSums((Z %*% info_inv) * Z) * w        # hat values
    score <- drop(crossprod(Z, y - mu + h * (0.5 - mu)))
    step <- drop(info_inv %*% score)
    ## step halving on the penalized log-likelihood for robustness
    pl_old <- firth_pll(Z, y, beta)
    s <- 1
    repeat {
      cand <- beta + s * step
      if (firth_pll(Z, y, cand) >= pl_old - 1e-12 || s < 1e-8) break
      s <- s / 2
    }
    beta <- cand
    if (max(abs(s * step)) < tol * max(1, max(abs(beta)))) break
  }
  beta
}

loglik <- function(Z, y, beta) {
  eta <- drop(Z %*% beta)
  sum(y * eta - log1p(exp(eta)))   # (fine for the moderate eta seen here)
}

## Firth's penalized log-likelihood l(b) + 1/2 log det(Z' W Z)
firth_pll <- function(Z, y, beta) {
  mu <- plogis(drop(Z %*% beta))
  ld <- determinant(crossprod(Z * (mu * (1 - mu)), Z), logarithm = TRUE)$modulus
  loglik(Z, y, beta) + 0.5 * as.numeric(ld)
}

coef_table <- function(fit) {
  s <- summary(fit)$coefficients
  list(names = rownames(s),
       coef = unname(s[, 1]), se = unname(s[, 2]), z = unname(s[, 3]),
       p = unname(2 * pnorm(-abs(s[, 3]))))
}

## plain glm run for exactly k IRLS iterations (never stops early)
glm_k_iter <- function(d, k) {
  suppressWarnings(glm(y ~ x1 + x2, family = binomial, data = d,
                       control = glm.control(epsilon = 1e-300, maxit = k)))
}

run_dataset <- function(name) {
  d <- read.csv(file.path(data_dir, paste0(name, ".csv")))
  Z <- cbind(1, d$x1, d$x2)
  out <- list(n = nrow(d), n_events = sum(d$y))

  ## (a) Firth / mean bias reduction ------------------------------------------
  fit <- glm(y ~ x1 + x2, family = binomial, data = d,
             method = brglm2::brglmFit,
             control = brglmControl(type = "AS_mean", epsilon = 1e-14,
                                    maxit = 1000))
  stopifnot(fit$converged, fit$type == "AS_mean")
  tab <- coef_table(fit)
  b_newton <- firth_newton(Z, d$y)
  rd <- max(abs(tab$coef - b_newton)) / max(abs(b_newton))
  cat(sprintf("%-15s Firth: brglm2 vs Newton rel diff %.3g, coef = %s\n",
              name, rd, paste(signif(tab$coef, 6), collapse = ", ")))
  if (rd > TOL_FIRTH) stop(sprintf("%s: brglm2 != Firth Newton (%.3g)", name, rd))
  ## SEs: inverse Fisher information at the estimate (checked)
  mu <- plogis(drop(Z %*% tab$coef))
  se_chk <- sqrt(diag(solve(crossprod(Z * (mu * (1 - mu)), Z))))
  stopifnot(max(abs(se_chk - tab$se) / tab$se) < 1e-8)
  out$firth <- c(tab, list(
    loglik = as.numeric(logLik(fit)),
    penalized_loglik = firth_pll(Z, d$y, tab$coef),
    deviance = fit$deviance,
    iterations = fit$iter,
    coef_independent_newton = b_newton,
    rel_diff_brglm2_vs_newton = rd,
    call = "glm(y ~ x1 + x2, family = binomial, method = brglm2::brglmFit, control = brglmControl(type = 'AS_mean', epsilon = 1e-14, maxit = 1000))"
  ))

  ## (b) plain ML logistic regression ----------------------------------------
  warn <- character(0)
  ml <- withCallingHandlers(
    glm(y ~ x1 + x2, family = binomial, data = d,
        control = glm.control(epsilon = 1e-14, maxit = 100)),
    warning = function(w) {
      warn <<- c(warn, conditionMessage(w)); invokeRestart("muffleWarning")
    })
  if (name == "firth_regular") {
    stopifnot(ml$converged, length(warn) == 0)
    tab_ml <- coef_table(ml)
    ## summary.glm's SEs use the IRLS weights of the LAST iteration, i.e.
    ## evaluated one step before the final coefficients (~1e-7 relative off
    ## here).  Record the exact SEs (inverse Fisher information at the final
    ## estimate) as the reference, and summary()'s as se_summary_glm.
    mu <- plogis(drop(Z %*% tab_ml$coef))
    se_exact <- sqrt(diag(solve(crossprod(Z * (mu * (1 - mu)), Z))))
    stopifnot(max(abs(se_exact / tab_ml$se - 1)) < 1e-5)
    z_exact <- tab_ml$coef / se_exact
    out$glm <- c(list(names = tab_ml$names, coef = tab_ml$coef,
                      se = se_exact, z = z_exact, p = 2 * pnorm(-abs(z_exact)),
                      se_summary_glm = tab_ml$se),
                 list(loglik = as.numeric(logLik(ml)),
                      deviance = ml$deviance,
                      iterations = ml$iter))
  }

  ## (c) separation: do plain glm's estimates diverge? --------------------------
  iters <- c(5, 10, 25, 50)
  fits <- lapply(iters, function(k) glm_k_iter(d, k))
  cf <- lapply(fits, function(f) unname(coef(f)))
  se <- lapply(fits, function(f) unname(sqrt(diag(vcov(f)))))
  ## an estimate "diverges" if it keeps growing between 25 and 50 iterations
  ## (for infinite MLEs |b| grows ~linearly and SE ~exponentially)
  grow_coef <- abs(cf[[4]]) - abs(cf[[3]])
  se_ratio <- se[[4]] / se[[1]]
  diverging <- abs(grow_coef) > 1e-6 * pmax(1, abs(cf[[3]])) | se_ratio > 100
  out$separation <- list(
    method = "plain glm with epsilon = 1e-300 for k IRLS iterations",
    iterations = iters, coef = cf, se = se,
    se_ratio_50_vs_5 = se_ratio,
    coef_diverges = diverging,          # per coefficient, intercept first
    ml_estimate_finite = !any(diverging),
    glm_default_converged = ml$converged,
    glm_warnings = I(unique(warn))   # always a JSON array
  )
  cat(sprintf("%-15s plain glm: diverging = %s; warnings: %s\n", name,
              paste(diverging, collapse = "/"),
              if (length(warn)) paste(unique(warn), collapse = "; ") else "none"))
  out
}

res <- list(meta = list(
  R_version = R.version.string,
  brglm2_version = as.character(packageVersion("brglm2")),
  jsonlite_version = as.character(packageVersion("jsonlite")),
  detect_separation_available = FALSE,
  detect_separation_note = paste(
    "brglm2::detect_separation is a stub in brglm2 >= 0.8.0 (moved to the",
    "detectseparation package, not installed); separation is recorded from",
    "plain glm's diverging estimates instead."),
  x_scale = "raw (unstandardized) x1, x2; coefficients intercept first"
))
## sanity check of the claim above
res$meta$detect_separation_available <- !inherits(
  try(brglm2::detect_separation(), silent = TRUE), "try-error")
stopifnot(!res$meta$detect_separation_available)

for (nm in c("firth_regular", "firth_quasi", "firth_complete"))
  res[[nm]] <- run_dataset(nm)

## expected separation status of the constructed data sets
stopifnot(res$firth_regular$separation$ml_estimate_finite,
          !res$firth_quasi$separation$ml_estimate_finite,
          !res$firth_complete$separation$ml_estimate_finite)

out_file <- file.path(ref_dir, "firth_logistic.json")
write_json_exact(res, out_file)
cat("wrote", out_file, "\n")
