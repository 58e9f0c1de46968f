"""Delta tables read and written generically: through their logs with delta-rs, and with Spark SQL."""
