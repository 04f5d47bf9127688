"""Theory checks of the noise family (BEYOND sections 0-5): exact two-token quadratures, one-step moments,
Monte Carlo of small runs and the checks that compare them."""
