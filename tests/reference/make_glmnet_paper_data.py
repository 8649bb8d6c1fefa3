"""Write draws of the VC-PCR paper's simulation for glmnet_paper_weights.R.

Run from anywhere (numpy only):

    python tests/reference/make_glmnet_paper_data.py

The design is the paper's simulation study (docs/reproduction.md), written out
here so that the committed CSV files do not depend on the library's generator:
p = 200; variables 1-50 form ten blocks of five (active, inactive, ... in the
order A I A I A I A I I I), 51-200 are independent N(0, 1); b = +1, -1, +1, -1
on the four active blocks; X ~ N(0, Sigma) with correlation ``rho`` inside a
correlated group (config 1: blocks of ten 1-10, ..., 31-40, plus 41-45 and
46-50; config 2: each block of five; config 3: the four active blocks only);
noise variance b' Sigma b / SNR with SNR = 10. Every draw uses its own
``np.random.default_rng`` seed; values are written with ``%.17g``.
"""

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "data"
P = 200

# correlated group of each of the ten blocks of five (-1: independent)
GROUPS = {
    1: [0, 0, 1, 1, 2, 2, 3, 3, 4, 5],
    2: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    3: [0, -1, 1, -1, 2, -1, 3, -1, -1, -1],
}

# name: (config, n, rho, seed)
DATASETS = {
    "paper_c1_n50": (1, 50, 0.6, 101),
    "paper_c2_n50": (2, 50, 0.6, 102),
    "paper_c3_n50": (3, 50, 0.6, 103),
    "paper_c2_n25": (2, 25, 0.3, 104),
}


def covariance(config, rho):
    """The paper's Sigma for one configuration."""
    group = np.full(P, -1)
    for block, g in enumerate(GROUPS[config]):
        group[5 * block : 5 * block + 5] = g
    same = (group[:, None] == group[None, :]) & (group[:, None] >= 0)
    sigma = np.where(same, rho, 0.0)
    np.fill_diagonal(sigma, 1.0)
    return sigma


def coefficients():
    """True b: +1, -1, +1, -1 on variables 1-5, 11-15, 21-25, 31-35."""
    b = np.zeros(P)
    for start, sign in ((0, 1.0), (10, -1.0), (20, 1.0), (30, -1.0)):
        b[start : start + 5] = sign
    return b


def draw(config, n, rho, seed, snr=10.0):
    rng = np.random.default_rng(seed)
    sigma = covariance(config, rho)
    X = rng.standard_normal((n, P)) @ np.linalg.cholesky(sigma).T
    b = coefficients()
    noise_sd = np.sqrt(b @ sigma @ b / snr)
    y = X @ b + noise_sd * rng.standard_normal(n)
    return X, y


def main():
    OUT.mkdir(exist_ok=True)
    header = ",".join([f"x{j + 1}" for j in range(P)] + ["y"])
    for name, (config, n, rho, seed) in DATASETS.items():
        X, y = draw(config, n, rho, seed)
        np.savetxt(
            OUT / f"{name}.csv",
            np.column_stack([X, y]),
            fmt="%.17g",
            delimiter=",",
            header=header,
            comments="",
        )
        print(f"wrote data/{name}.csv ({n} x {P})")


if __name__ == "__main__":
    main()
