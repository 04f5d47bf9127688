"""The convergence rates of THEORY section 5: the measurement and its record
(``measure``) and the coupled runs behind it (``runs``).
"""
