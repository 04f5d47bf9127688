"""Report part 3, beyond the paper (BEYOND sections 0-5): the theory checks (``report``), the measurements
(``science``) and their figures (``plots``)."""
