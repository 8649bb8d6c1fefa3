"""The numerical kernels of vcpcr: arrays in, arrays out.

The batched SOS-NMF engine, the step-0 weight paths (ridge, elastic net,
Cox, glmnet's early-stopped path), the batched step-2 fits and their
metrics, the pooled CV deviance, Breslow's and Efron's partial likelihood
and each family's response math. The kernels import each other, numpy,
scipy and the foundations (``vcpcr._checks``, ``vcpcr.exceptions``)
only: no pandas, statsmodels, lifelines, estimator or family. The weight
paths reach scikit-learn through ``ConvergenceWarning``'s base class and,
inside their path functions, scikit-learn's and scikit-survival's solvers;
the other kernels import no scikit-learn at all.
"""
