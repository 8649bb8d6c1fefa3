## Reference step-0 weights with unpenalized covariates, from glmnet, for the
## vcpcr test suite (issue #18).
##
## Run:   Rscript tests/reference/glmnet_covariates.R
## Writes tests/reference/glmnet_covariates.json
##
## Data: gauss_wide (40 x 60), binom_tall (120 x 10), cox_wide (80 x 100); the
## first two columns x1, x2 are the covariates Z (c = 2), the others the
## clustered variables X (p columns).  Everything is scale()d (sample sd,
## divisor n - 1); gaussian y too.
##
## vcpcr's objective at (delta, ALPHA = 0.05), with Z unpenalized:
##   loss(b0 + Z c + X w) + delta (ALPHA ||w||_1 + (1 - ALPHA)/2 ||w||^2)
## (gaussian: 1/(2n) ||y - ...||^2; binomial: -(1/n) loglik; cox: -(1/n)
## Breslow log partial likelihood, no b0).
##
## glmnet(cbind(Z, X), y, penalty.factor = c(0, 0, rep(1, p))) rescales the
## penalty factors to sum to the number of columns: the genes' factor is
## r = (p + c) / p.  So the genes' l1 penalty is lambda * alpha * r and their
## l2 penalty lambda * (1 - alpha) * r / ys, where ys = sd_pop(y) for the
## gaussian family (glmnet's y-scaling, see glmnet_enet.R) and 1 otherwise.
## Matching vcpcr's:
##   lambda = delta * (ALPHA + (1 - ALPHA) * ys) / r,  alpha = ALPHA * delta / (lambda * r)
## (recorded as lambda_glmnet, alpha_glmnet).  For the binomial and cox
## families this is lambda = delta * p / (p + c), alpha = ALPHA.  The KKT
## check below is on vcpcr's objective (gaussian, binomial), so it fails if
## the mapping is wrong; the unpenalized block's gradient must vanish too.

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
source(file.path(ref_dir, "json_exact.R"))

glmnet.control(fdev = 0, devmax = 1)

THRESH  <- 1e-30
MAXIT   <- 1e8
ALPHA   <- 0.05
DELTAS  <- c(0.5, 0.1)   # absolute, 0.5 = vcpcr's default
N_COV   <- 2
TOL_KKT <- 1e-6

prep <- function(name, family) {
  d <- read.csv(file.path(data_dir, paste0(name, ".csv")))
  A <- scale(as.matrix(d[, grep("^x[0-9]+$", names(d))]))
  attributes(A)[c("scaled:center", "scaled:scale")] <- NULL
  y <- switch(family,
    gaussian = as.numeric(scale(d$y)),
    binomial = d$y,
    cox = Surv(d$time, d$event))
  list(A = A, y = y)
}

kkt <- function(A, y, family, b0, beta, delta, p) {
  n <- nrow(A)
  eta <- b0 + drop(A %*% beta)
  mu <- if (family == "gaussian") eta else plogis(eta)
  g <- -drop(crossprod(A, y - mu)) / n
  cov <- seq_len(N_COV)
  w <- beta[-cov]
  gw <- g[-cov] + delta * (1 - ALPHA) * w
  l1 <- delta * ALPHA
  act <- w != 0
  v_act <- if (any(act)) max(abs(gw[act] + l1 * sign(w[act]))) else 0
  v_ina <- if (any(!act)) max(0, max(abs(gw[!act])) - l1) else 0
  max(v_act, v_ina, abs(g[cov]), abs(sum(y - mu)) / n) / delta
}

run <- function(name, family) {
  d <- prep(name, family)
  A <- d$A; y <- d$y
  p <- ncol(A) - N_COV
  r <- ncol(A) / p
  ys <- if (family == "gaussian") sqrt(mean((y - mean(y))^2)) else 1
  pf <- c(rep(0, N_COV), rep(1, p))
  out <- list(family = family, covariates = N_COV, deltas = DELTAS,
              lambda_glmnet = numeric(0), alpha_glmnet = numeric(0), coef = list())
  for (k in seq_along(DELTAS)) {
    delta <- DELTAS[k]
    lambda <- delta * (ALPHA + (1 - ALPHA) * ys) / r
    alpha <- ALPHA * delta / (lambda * r)
    f <- glmnet(A, y, family = family, alpha = alpha, lambda = lambda,
                penalty.factor = pf, standardize = FALSE, thresh = THRESH,
                maxit = MAXIT)
    stopifnot(f$jerr == 0)
    beta <- as.numeric(as.matrix(f$beta))
    b0 <- if (family == "cox") 0 else as.numeric(f$a0)
    if (family != "cox") {
      v <- kkt(A, y, family, b0, beta, delta, p)
      cat(sprintf("%-10s delta %g: KKT %.3g, nonzero genes %d\n",
                  name, delta, v, sum(beta[-(1:N_COV)] != 0)))
      if (v > TOL_KKT) stop(sprintf("%s: KKT violation %.3g", name, v))
    } else {
      cat(sprintf("%-10s delta %g: nonzero genes %d\n",
                  name, delta, sum(beta[-(1:N_COV)] != 0)))
    }
    out$lambda_glmnet <- c(out$lambda_glmnet, lambda)
    out$alpha_glmnet <- c(out$alpha_glmnet, alpha)
    out$coef[[k]] <- beta[-(1:N_COV)]
    out$covariate_coef[[k]] <- beta[1:N_COV]
  }
  out
}

res <- list(
  gauss_wide = run("gauss_wide", "gaussian"),
  binom_tall = run("binom_tall", "binomial"),
  cox_wide   = run("cox_wide", "cox")
)
res$meta <- list(glmnet = as.character(packageVersion("glmnet")),
                 R = R.version.string)
write_json_exact(res, file.path(ref_dir, "glmnet_covariates.json"))
