"""The domain, the bottom layer: datasets, X-rays, questions, studies, memberships, the
vocabulary and the one access function. Sub-packages hold what grew past one module."""
