"""The SPDE of THEORY section 4 as a density on the circle and the 2-sphere, coupled to particles on one noise
path (docs/spde.md): ``harmonics``/``legendre`` (the basis and its quadrature), ``fields`` (the truncated noise,
a LimitField), ``attention`` (softmax and USA through the harmonics of e^{beta <x, y>}), ``initial`` (start
laws and samples), ``solver`` (the push-forward scheme), ``diagnostics`` (mass, positivity, E_beta, resolution,
weak distances), ``theory`` (the linear theory), ``checks`` and ``coupled`` (its checks), ``study`` (the report's).
"""
