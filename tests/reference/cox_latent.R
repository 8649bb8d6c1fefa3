# survival::coxph on the cluster latent variables of a fixed VC-PCR Cox fit
# (data/cox_latent.csv, written by make_cox_latent.py). Efron ties, as lifelines.
# Usage: Rscript tests/reference/cox_latent.R
suppressPackageStartupMessages(library(survival))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
source(file.path(here, "json_exact.R"))
d <- read.csv(file.path(here, "data", "cox_latent.csv"))
covs <- grep("^cluster_", names(d), value = TRUE)
f <- as.formula(paste("Surv(time, event) ~", paste(covs, collapse = " + ")))
fit <- coxph(f, data = d, ties = "efron",
             control = coxph.control(eps = 1e-14, toler.chol = 1e-15, iter.max = 100))
s <- summary(fit)
out <- list(
  meta = list(R_version = R.version.string,
              survival_version = as.character(packageVersion("survival")),
              call = "coxph(Surv(time, event) ~ cluster_1 + ..., ties = 'efron')"),
  names = covs,
  coef = unname(coef(fit)),
  se = unname(sqrt(diag(vcov(fit)))),
  z = unname(s$coefficients[, "z"]),
  p = unname(s$coefficients[, "Pr(>|z|)"]),
  loglik = fit$loglik,
  concordance = unname(fit$concordance["concordance"])
)
write_json_exact(out, file.path(here, "cox_latent.json"))
