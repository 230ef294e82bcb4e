"""The domain, under the apps and above the web platform (`platform`): datasets, X-rays,
questions, studies, memberships, the vocabulary and the one access function. Sub-packages hold
what grew past one module."""
