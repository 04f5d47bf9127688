"""The checks of the SPDE solver (docs/spde.md sections 7-9; THEORY sections 4-5): the linear theory (``checks``),
particles against the density on one path (``coupled``), the covariance read from the degree energies
(``covariance``), propagation of chaos in W_2 on the circle (``chaos``, its power: ``chaos_power``), on the sphere
(``chaos_sphere``) and by the spherical sliced W_2 (``sliced_sphere``); on the circle to N = 10^6 with the energy's
fluctuation along the dynamics (``chaos_large``)."""
