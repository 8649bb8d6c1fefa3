# survival::coxph with strata, Efron ties (lifelines' strata and tie method):
# the stratified step-2 fit of cross-validation (vcpcr._solvers.step2_fits).
# Data: data/cox_tall.csv (x1..x3) and data/cox_latent.csv (cluster_*), both
# with many tied times; the stratum of row i (0-based) is i %% 3.
# Usage: Rscript tests/reference/cox_strata.R
suppressPackageStartupMessages(library(survival))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
source(file.path(here, "json_exact.R"))
fit_one <- function(name, covs) {
  d <- read.csv(file.path(here, "data", paste0(name, ".csv")))
  d$g <- (seq_len(nrow(d)) - 1) %% 3
  if (is.null(covs)) covs <- grep("^cluster_", names(d), value = TRUE)
  f <- as.formula(paste("Surv(time, event) ~", paste(covs, collapse = " + "),
                        "+ strata(g)"))
  fit <- coxph(f, data = d, ties = "efron",
               control = coxph.control(eps = 1e-14, toler.chol = 1e-15,
                                       iter.max = 100))
  list(names = covs, coef = unname(coef(fit)), loglik = fit$loglik)
}
out <- list(
  meta = list(R_version = R.version.string,
              survival_version = as.character(packageVersion("survival")),
              call = "coxph(Surv(time, event) ~ ... + strata(g), ties = 'efron')",
              strata = "row i (0-based) is in stratum i %% 3"),
  cox_tall = fit_one("cox_tall", c("x1", "x2", "x3")),
  cox_latent = fit_one("cox_latent", NULL)
)
write_json_exact(out, file.path(here, "cox_strata.json"))
