"""gunicorn's settings that belong to the code rather than to a deployment (gunicorn reads this
file from its working directory, the checkout): its access log, when turned on
(`--access-logfile`), writes sign-in links without their secrets
(readerstudy.platform.log_redaction)."""

from readerstudy.platform.log_redaction import gunicorn_logger_class

logger_class = gunicorn_logger_class()
