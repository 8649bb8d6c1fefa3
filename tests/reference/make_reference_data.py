"""Generate the input data sets used by the R reference scripts.

Run from anywhere:

    python tests/reference/make_reference_data.py

Every random draw comes from ``np.random.default_rng`` with a fixed seed
(one seed per data set, so that changing one data set leaves the others
untouched).  Values are written with ``%.17g`` so that the CSV files round-trip
to the exact same doubles in both Python and R.

X is deliberately *raw* (unstandardized): every column gets its own mean and
scale so that the column standardization done by the library is exercised.
"""

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "data"


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------
def block_corr_normal(rng, n, p, block=5, rho=0.6):
    """Standard normal n x p matrix with block-diagonal correlation.

    Inside each block of ``block`` consecutive columns the correlation is
    ``rho`` (exchangeable); columns in different blocks are independent.
    """
    z = np.empty((n, p))
    for start in range(0, p, block):
        k = min(block, p - start)
        common = rng.standard_normal((n, 1))
        own = rng.standard_normal((n, k))
        z[:, start : start + k] = np.sqrt(rho) * common + np.sqrt(1 - rho) * own
    return z


def raw_scale(rng, z):
    """Give each column its own location and scale (keeps correlations)."""
    p = z.shape[1]
    means = rng.uniform(-5.0, 5.0, size=p)
    sds = np.exp(rng.uniform(np.log(0.2), np.log(20.0), size=p))
    return means + z * sds


def sparse_beta(rng, p, k):
    """Coefficient vector (on the standardized scale) with k nonzeros."""
    b = np.zeros(p)
    idx = rng.choice(p, size=k, replace=False)
    b[idx] = rng.choice([-1.0, 1.0], size=k) * rng.uniform(0.5, 2.0, size=k)
    return b


def write(name, X, extra):
    """Write X (columns x1..xp) plus the extra response columns to CSV."""
    p = X.shape[1]
    cols = [f"x{j + 1}" for j in range(p)] + list(extra)
    data = np.column_stack([X] + [np.asarray(v, dtype=float) for v in extra.values()])
    path = OUT / f"{name}.csv"
    np.savetxt(
        path, data, fmt="%.17g", delimiter=",", header=",".join(cols), comments=""
    )
    return path


# ----------------------------------------------------------------------------
# gaussian: y = Z b + noise (Z = standardized-scale design)
# ----------------------------------------------------------------------------
def gaussian(seed, n, p, k, noise=1.0):
    rng = np.random.default_rng(seed)
    z = block_corr_normal(rng, n, p)
    b = sparse_beta(rng, p, k)
    y = 3.0 + z @ b + noise * rng.standard_normal(n)
    return raw_scale(rng, z), {"y": y}


# ----------------------------------------------------------------------------
# binomial: logistic model
# ----------------------------------------------------------------------------
def binomial(seed, n, p, k):
    rng = np.random.default_rng(seed)
    z = block_corr_normal(rng, n, p)
    b = sparse_beta(rng, p, k)
    eta = -0.3 + z @ b
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
    return raw_scale(rng, z), {"y": y}


# ----------------------------------------------------------------------------
# Firth data sets (2 covariates)
# ----------------------------------------------------------------------------
def firth_regular(seed=301, n=50):
    """Overlapping classes: ordinary ML estimates exist."""
    rng = np.random.default_rng(seed)
    x1 = rng.normal(0.0, 1.0, n)
    x2 = rng.normal(2.0, 3.0, n)
    eta = 0.2 + 0.8 * x1 - 0.3 * x2
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
    return np.column_stack([x1, x2]), {"y": y}


def firth_quasi(seed=302, n=30):
    """Quasi-complete separation along x1.

    x1 > 0  -> y = 1,  x1 < 0 -> y = 0, and several observations sit exactly
    on the boundary x1 == 0 with *both* outcomes.  The separating hyperplane
    x1 = 0 therefore separates the data only weakly (quasi-complete).
    x2 is unrelated noise with a nonzero mean.
    """
    rng = np.random.default_rng(seed)
    n_tie = 6  # 3 ties with y=1, 3 with y=0
    n_pos = (n - n_tie) // 2
    n_neg = n - n_tie - n_pos
    x1 = np.concatenate(
        [
            np.round(rng.uniform(0.1, 3.0, n_pos), 2),  # strictly positive
            -np.round(rng.uniform(0.1, 3.0, n_neg), 2),  # strictly negative
            np.zeros(n_tie),  # on the boundary
        ]
    )
    y = np.concatenate(
        [np.ones(n_pos), np.zeros(n_neg), np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])]
    )
    x2 = rng.normal(1.0, 2.0, n)
    perm = rng.permutation(n)
    return np.column_stack([x1, x2])[perm], {"y": y[perm]}


def firth_complete(seed=303, n=30):
    """Complete separation: x1 + 0.5*x2 > 0 <=> y = 1, with a margin."""
    rng = np.random.default_rng(seed)
    x1 = rng.normal(0.0, 1.5, n)
    x2 = rng.normal(0.0, 1.0, n)
    s = x1 + 0.5 * x2
    # push points away from the separating line to create a clear margin
    s_sign = np.where(s >= 0, 1.0, -1.0)
    x1 = x1 + 0.5 * s_sign
    y = (s_sign > 0).astype(float)
    return np.column_stack([x1, x2]), {"y": y}


# ----------------------------------------------------------------------------
# Cox: exponential survival times, ~30% censoring, ties (times rounded to 0.1)
# ----------------------------------------------------------------------------
def cox(seed, n, p, k, censor_rate):
    """Exponential PH model, baseline hazard 0.2, exponential censoring.

    ``censor_rate`` was tuned per data set to give roughly 30% censoring.
    """
    rng = np.random.default_rng(seed)
    z = block_corr_normal(rng, n, p)
    b = sparse_beta(rng, p, k) * 0.6
    hazard = 0.2 * np.exp(z @ b)
    t_event = rng.exponential(1.0 / hazard)
    t_cens = rng.exponential(1.0 / censor_rate, size=n)
    time = np.minimum(t_event, t_cens)
    event = (t_event <= t_cens).astype(float)
    # round to one decimal -> tied times; keep strictly positive times
    time = np.maximum(np.round(time, 1), 0.1)
    return raw_scale(rng, z), {"time": time, "event": event}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    sets = {
        "gauss_wide": gaussian(101, n=40, p=60, k=8),
        "gauss_tall": gaussian(102, n=80, p=20, k=6),
        "binom_wide": binomial(201, n=60, p=80, k=8),
        "binom_tall": binomial(202, n=120, p=10, k=4),
        "firth_regular": firth_regular(),
        "firth_quasi": firth_quasi(),
        "firth_complete": firth_complete(),
        "cox_wide": cox(401, n=80, p=100, k=5, censor_rate=0.06),
        "cox_tall": cox(402, n=150, p=6, k=3, censor_rate=0.03),
    }
    for name, (X, extra) in sets.items():
        path = write(name, X, extra)
        summary = f"{name:15s} n={X.shape[0]:4d} p={X.shape[1]:4d}"
        if "y" in extra:
            summary += f"  mean(y)={np.mean(extra['y']):.3f}"
        else:
            t, e = extra["time"], extra["event"]
            summary += (
                f"  censored={1 - e.mean():.2f}"
                f"  distinct times={len(np.unique(t))}/{len(t)}"
            )
        print(summary, "->", path.name)


if __name__ == "__main__":
    main()
