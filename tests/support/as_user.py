"""An argv prefix that runs a command as an ordinary user: uid 1000 in a user namespace whose
files are this user's. A root process takes its trust -- keys, root metadata, the rollback floor
-- from the machine itself, never from CUDAENV_SYSROOT (docs/channel.md, "Where trust lives"), so
tests and benchmarks whose keys live under a sysroot run cudaenv as a non-root user, as a
developer's own account would. Empty when already running as non-root."""
import os

AS_USER = ["unshare", "--user", "--map-user=1000", "--map-group=1000"] if os.geteuid() == 0 else []
