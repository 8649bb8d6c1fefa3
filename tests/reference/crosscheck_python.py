"""Optional cross-check of the R reference numbers against independent Python
computations (numpy / scipy / statsmodels / lifelines).

    python tests/reference/crosscheck_python.py

Not part of the test suite (needs statsmodels and lifelines); prints the
maximum absolute / relative differences found.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

REF = Path(__file__).resolve().parent
DATA = REF / "data"


def load(name):
    d = pd.read_csv(DATA / f"{name}.csv")
    X = d[[c for c in d.columns if c.startswith("x")]].to_numpy()
    return d, X


def scale(a):
    """R's scale(): centre and divide by the sample sd (ddof=1)."""
    return (a - a.mean(axis=0)) / a.std(axis=0, ddof=1)


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def report(label, value):
    print(f"  {label:60s} {value:.3g}")


def glmnet_checks(ref):
    print("glmnet_weights.json")
    for name in ["gauss_wide", "gauss_tall"]:
        d, X = load(name)
        X, y = scale(X), scale(d["y"].to_numpy())
        n, p = X.shape
        r = ref[name]["ridge"]
        cf = [
            np.linalg.solve(X.T @ X / n + dl * np.eye(p), X.T @ y / n)
            for dl in r["delta"]
        ]
        report(
            f"{name} ridge: glmnet vs numpy closed form (rel)",
            max(rel(c, f) for c, f in zip(r["coef"], cf, strict=True)),
        )
        report(
            f"{name} ridge: R closed form vs numpy closed form (rel)",
            max(rel(c, f) for c, f in zip(r["coef_closed_form"], cf, strict=True)),
        )
        la = ref[name]["lasso"]
        report(
            f"{name} lasso: delta_max recomputed (rel)",
            abs(np.max(np.abs(X.T @ y)) / n / la["delta_max"] - 1),
        )
        worst = 0.0
        for dl, w in zip(la["delta"], la["coef"], strict=True):
            w = np.asarray(w)
            g = -X.T @ (y - X @ w) / n
            act = w != 0
            v = max(
                np.max(np.abs(g[act] + dl * np.sign(w[act])), initial=0),
                max(np.max(np.abs(g[~act]), initial=0) - dl, 0),
            )
            worst = max(worst, v / dl)
        report(f"{name} lasso: KKT violation / delta (numpy)", worst)

    for name in ["binom_wide", "binom_tall"]:
        d, X = load(name)
        X, y = scale(X), d["y"].to_numpy()
        n, p = X.shape
        r = ref[name]["ridge"]
        Z = np.column_stack([np.ones(n), X])
        worst = 0.0
        for dl, b0, w in zip(r["delta"], r["intercept"], r["coef"], strict=True):
            pen = np.diag(np.r_[0.0, np.full(p, dl)])
            t = np.zeros(p + 1)
            for _ in range(200):  # Newton on -(1/n) loglik + dl/2 ||w||^2
                mu = 1 / (1 + np.exp(-Z @ t))
                g = -Z.T @ (y - mu) / n + pen @ t
                H = Z.T @ (Z * (mu * (1 - mu))[:, None]) / n + pen
                step = np.linalg.solve(H, g)
                t -= step
                if np.max(np.abs(step)) < 1e-15 * max(1, np.max(np.abs(t))):
                    break
            worst = max(worst, rel(np.r_[b0, w], t))
        report(f"{name} ridge: glmnet vs numpy Newton (rel)", worst)


def firth_checks(ref):
    import statsmodels.api as sm

    print("firth_logistic.json")
    d, X = load("firth_regular")
    Z = sm.add_constant(X)
    fit = sm.Logit(d["y"].to_numpy(), Z).fit(disp=0, tol=1e-14, maxiter=100)
    g = ref["firth_regular"]["glm"]
    report(
        "firth_regular plain glm coef vs statsmodels Logit (rel)",
        rel(g["coef"], fit.params),
    )
    report("firth_regular plain glm se vs statsmodels (rel)", rel(g["se"], fit.bse))
    report("firth_regular plain glm p vs statsmodels (rel)", rel(g["p"], fit.pvalues))
    report(
        "firth_regular plain glm loglik vs statsmodels (abs)",
        abs(g["loglik"] - fit.llf),
    )

    for name in ["firth_regular", "firth_quasi", "firth_complete"]:
        d, X = load(name)
        Z = np.column_stack([np.ones(len(X)), X])
        y = d["y"].to_numpy()
        b = np.zeros(3)
        for _ in range(200):  # Firth's modified score, plain Newton
            mu = 1 / (1 + np.exp(-Z @ b))
            w = mu * (1 - mu)
            info_inv = np.linalg.inv(Z.T @ (Z * w[:, None]))
            h = np.einsum("ij,jk,ik->i", Z, info_inv, Z) * w
            step = info_inv @ (Z.T @ (y - mu + h * (0.5 - mu)))
            b = b + step
            if np.max(np.abs(step)) < 1e-15:
                break
        mu = 1 / (1 + np.exp(-Z @ b))
        se = np.sqrt(np.diag(np.linalg.inv(Z.T @ (Z * (mu * (1 - mu))[:, None]))))
        f = ref[name]["firth"]
        ll = np.sum(y * (Z @ b) - np.logaddexp(0, Z @ b))
        report(f"{name} Firth coef vs numpy Newton (rel)", rel(f["coef"], b))
        report(f"{name} Firth se vs numpy (rel)", rel(f["se"], se))
        report(f"{name} Firth loglik vs numpy (abs)", abs(f["loglik"] - ll))


def cox_checks(ref):
    from lifelines import CoxPHFitter
    from statsmodels.duration.hazard_regression import PHReg

    print("cox.json")
    for name in ["cox_wide", "cox_tall"]:
        d, X = load(name)
        t, e = d["time"].to_numpy(), d["event"].to_numpy()
        c = ref[name]["coxph"]
        cph = CoxPHFitter().fit(
            d[["x1", "x2", "x3", "time", "event"]],
            "time",
            "event",
            fit_options={"precision": 1e-14},
        )
        ef = c["efron"]
        report(
            f"{name} coxph efron coef vs lifelines (rel)",
            rel(ef["coef"], cph.params_.to_numpy()),
        )
        report(
            f"{name} coxph efron se vs lifelines (rel)",
            rel(ef["se"], cph.standard_errors_.to_numpy()),
        )
        report(
            f"{name} coxph efron loglik vs lifelines (abs)",
            abs(ef["loglik"] - cph.log_likelihood_),
        )
        report(
            f"{name} coxph efron concordance vs lifelines (abs)",
            abs(ef["concordance"] - cph.concordance_index_),
        )
        for ties in ["efron", "breslow"]:
            ph = PHReg(t, d[["x1", "x2", "x3"]].to_numpy(), status=e, ties=ties)
            r = ph.fit()
            report(
                f"{name} coxph {ties} coef vs statsmodels PHReg (rel)",
                rel(c[ties]["coef"], r.params),
            )
            report(
                f"{name} coxph {ties} se vs statsmodels PHReg (rel)",
                rel(c[ties]["se"], r.bse),
            )
            report(
                f"{name} coxph {ties} loglik vs statsmodels PHReg (abs)",
                abs(c[ties]["loglik"] - r.llf),
            )
        # glmnet Cox ridge: Breslow gradient with numpy
        Xs = scale(X)
        n = len(t)
        atrisk = t[None, :] >= t[:, None]
        worst = 0.0
        for dl, w in zip(
            ref[name]["ridge"]["delta"], ref[name]["ridge"]["coef"], strict=True
        ):
            w = np.asarray(w)
            r_ = np.exp(Xs @ w)
            ev = e == 1
            S0 = atrisk[ev] @ r_
            S1 = atrisk[ev] @ (Xs * r_[:, None])
            grad = (Xs[ev] - S1 / S0[:, None]).sum(axis=0)
            worst = max(
                worst, np.max(np.abs(-grad / n + dl * w)) / (dl * np.max(np.abs(w)))
            )
        report(f"{name} glmnet cox ridge: Breslow stationarity (numpy, rel)", worst)


def main():
    glmnet_checks(json.loads((REF / "glmnet_weights.json").read_text()))
    firth_checks(json.loads((REF / "firth_logistic.json").read_text()))
    cox_checks(json.loads((REF / "cox.json").read_text()))


if __name__ == "__main__":
    main()
