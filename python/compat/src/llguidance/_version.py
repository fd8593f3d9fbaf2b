# 1.7.6: inside both servers' ranges for `llguidance` (vllm 0.33.0: >=1.7.0,<1.8.0;
# sglang 0.5.23: >=1.7.6,<2.0.0), so pip keeps this package when it resolves either one.
# `+llgrs` (a PEP 440 local label) says it is not upstream's 1.7.6; PyPI refuses it.
__version__ = "1.7.6+llgrs"
