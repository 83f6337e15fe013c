import os

from devtools.cli import main
from devtools.stack.objectstore import local_credentials_env

# The developer's commands talk to the local stack: its object store key reaches Sluice's clients the
# way a real deployment's does, through boto3's default credential chain (here, the environment).
if not any(name in os.environ for name in ("AWS_ACCESS_KEY_ID", "AWS_PROFILE")):
    os.environ.update(local_credentials_env())
main(prog_name="python -m devtools")
