"""The report part ``architectures`` (BEYOND sections 7-10): its runs and
report (``report``) and its checks with their power records (``checks``).
"""
