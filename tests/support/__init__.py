"""What the tests share: helpers, the example organization, real processes (`serve`, shards behind
nginx, Chromium) and the stand-ins on loopback (SMTP, the push service, webhook receivers), with
the data files they read (data/)."""
